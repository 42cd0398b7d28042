import type { JsonObject, JsonValue } from '@packetagent/contracts';

export const PROVIDER_NAMES = ['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local', 'scripted'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** A tool the model may call, described by a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

/**
 * A call the model asked for. `arguments` is null when `rawArguments` is not a JSON object;
 * `malformed` then says why, and the caller answers with one correction turn instead of
 * executing anything.
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: JsonObject | null;
  rawArguments: string;
  malformed?: string;
}

/**
 * The provider's own form of an assistant turn (content blocks, thinking signatures, reasoning
 * items...). Stored opaque and sent back verbatim when the conversation goes on with the same
 * provider and model; another provider gets the neutral fields instead.
 */
export interface NativeTurn {
  provider: ProviderName;
  model: string;
  payload: JsonValue;
}

export interface ToolResultMessage {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ToolCall[]; native?: NativeTurn }
  /** Results for the tool calls of the assistant turn just before, in the same order. */
  | { role: 'tool'; results: ToolResultMessage[] };

export interface ModelCapabilities {
  tools: boolean;
  structuredOutput: boolean;
  streaming: boolean;
}

/** Prices in US dollars per million tokens. */
export interface ModelPricing {
  inputPerMTokUsd: number;
  outputPerMTokUsd: number;
}

export interface CatalogEntry {
  provider: ProviderName;
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  capabilities: ModelCapabilities;
  pricing: ModelPricing;
  /**
   * A higher price for the whole call once its input passes `aboveInputTokens` (Gemini Pro
   * bills a long prompt this way).
   */
  longContextPricing?: ModelPricing & { aboveInputTokens: number };
  /** Where the entry comes from: the built-in table, the operator's extra file, or made up for a local model or a script. */
  origin?: 'builtin' | 'extra' | 'local' | 'script';
}

export interface ResolvedModel {
  provider: ProviderName;
  model: string;
  entry: CatalogEntry;
  /** True for the scripted provider: shown as scripted wherever a provider is shown. */
  scripted: boolean;
  /** The spec's own output limit, already capped at the model's. */
  maxOutputTokens?: number;
}

export interface ModelRequest {
  model: ResolvedModel;
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxOutputTokens: number;
  /** Ask for a final answer matching this JSON Schema, where the model supports it. */
  outputSchema?: JsonObject;
  /** Use the provider's streaming API (the turn is still returned whole). */
  stream?: boolean;
  /**
   * How many model turns the conversation has had (0 for the first call). The scripted provider
   * answers with this turn of its script; without it, it counts the assistant messages, which a
   * compacted transcript no longer holds all of.
   */
  turn?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'other';

/** What an adapter answers: one assistant turn. */
export interface AdapterTurn {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  usage: Usage;
  native: NativeTurn;
  /** Set when the provider reported no usage and the counts were estimated from characters. */
  usageEstimated?: boolean;
}

/** What the router answers: the turn, priced, with how many attempts it took. */
export interface ModelTurn extends AdapterTurn {
  provider: ProviderName;
  model: string;
  scripted: boolean;
  costUsd: number;
  attempts: number;
  durationMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** One provider's wire format, through its SDK (or documented HTTP API where it has none). */
export interface ProviderAdapter {
  readonly name: ProviderName;
  complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn>;
}
