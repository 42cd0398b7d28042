import { randomUUID } from 'node:crypto';
import type { JsonValue } from '@packetagent/contracts';
import { API_KEY_VARIABLES, type ProviderKeys } from '../config';
import { ProviderError } from '../errors';
import type { ChatMessage, ModelRequest, NativeTurn, ProviderName, StopReason, ToolCall, Usage } from '../provider.types';

/** The key for a call, or `provider_unavailable` naming where a key is read from. */
export async function requireKey(provider: Exclude<ProviderName, 'scripted' | 'local'>, keys: ProviderKeys, model: string): Promise<string> {
  const key = (await keys(provider))?.trim();
  if (key) return key;
  throw new ProviderError('provider_unavailable', `${provider} has no API key: set ${API_KEY_VARIABLES[provider].join(' or ')} (or store one in the vault)`, { provider, model });
}

/** The stored provider form of an assistant turn, when it was produced by this provider and model. */
export function nativePayload(message: Extract<ChatMessage, { role: 'assistant' }>, provider: ProviderName, model: string): JsonValue | undefined {
  const native = message.native;
  return native && native.provider === provider && native.model === model ? native.payload : undefined;
}

/** A deep copy holding only JSON: SDK objects may carry undefined fields or class instances. */
export function asJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
}

export function native(provider: ProviderName, model: string, payload: unknown): NativeTurn {
  return { provider, model, payload: asJson(payload) };
}

const CHARS_PER_TOKEN = 4;

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Characters a request sends, as the basis of estimates. With `countNative`, an assistant turn
 * that will be replayed in its provider form counts at the larger of the two forms (a stored
 * turn may hold reasoning the neutral text leaves out).
 */
export function requestChars(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>, countNative = false): number {
  let chars = request.system.length;
  for (const message of request.messages) {
    if (message.role === 'user') chars += message.content.length;
    else if (message.role === 'tool') chars += message.results.reduce((sum, result) => sum + result.content.length, 0);
    else {
      const neutral = message.content.length + message.toolCalls.reduce((sum, call) => sum + call.name.length + call.rawArguments.length, 0);
      chars += countNative && message.native ? Math.max(neutral, JSON.stringify(message.native.payload).length) : neutral;
    }
  }
  for (const tool of request.tools) chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
  return chars;
}

export function estimatedUsage(request: ModelRequest, text: string, toolCalls: ToolCall[]): Usage {
  const outputChars = text.length + toolCalls.reduce((sum, call) => sum + call.name.length + call.rawArguments.length, 0);
  return { inputTokens: estimateTokens(requestChars(request)), outputTokens: estimateTokens(outputChars) };
}

/** A turn that asked for tools is a tool turn whatever the provider called its stop. */
export function stopReasonOf(reason: StopReason, toolCalls: ToolCall[]): StopReason {
  return toolCalls.length > 0 && reason !== 'max_tokens' ? 'tool_use' : reason;
}

// Errors are recognised by name, not instanceof: those raised inside Node's fetch can come
// from another realm (a test sandbox, a worker) whose Error classes differ from ours.
function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string' ? (error as { name: string }).name : undefined;
}

export function isAbortLike(error: unknown): boolean {
  const name = errorName(error);
  return name === 'AbortError' || name === 'APIUserAbortError';
}

/**
 * fetch reports refused connections and dropped sockets as a TypeError ("fetch failed"); an SDK
 * may wrap it, so the cause chain is searched too.
 */
export function isFetchFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 4; depth++) {
    const message = (current as { message?: unknown }).message;
    if (errorName(current) === 'TypeError' && typeof message === 'string' && /fetch failed|terminated|network/i.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether a request asks for structured output and the model can give it. */
export function wantsSchema(request: ModelRequest): boolean {
  return request.outputSchema !== undefined && request.model.entry.capabilities.structuredOutput;
}

/** An id for a tool call whose provider sent none. */
export function mintCallId(prefix: string): string {
  return `${prefix}${randomUUID()}`;
}
