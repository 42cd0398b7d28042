import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { JsonObject } from '@packetagent/contracts';
import type { ProviderKeys } from '../config';
import { abortedError, badResponseError, connectionError, ProviderError, providerErrorFromHttp } from '../errors';
import type { AdapterTurn, CallOptions, ChatMessage, ModelRequest, ProviderAdapter, StopReason, ToolCall, Usage } from '../provider.types';
import { argumentsForReplay, toolCallFromText } from '../tool-arguments';
import { estimatedUsage, isAbortLike, mintCallId, native, nativePayload, requireKey, stopReasonOf, wantsSchema } from './common';

export type ChatCompletionsProvider = 'openai' | 'openrouter' | 'minimax' | 'local';

/** What differs between the services that speak OpenAI Chat Completions. */
export interface ChatCompletionsFlavour {
  provider: ChatCompletionsProvider;
  baseUrl: string;
  /** Headers the service documents beyond authentication. */
  headers?: Record<string, string>;
  /** `max_completion_tokens` where the older field is refused or deprecated. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Service-specific request fields. */
  extraBody?: Record<string, unknown>;
  /** Models that write their reasoning inline as <think>…</think>: kept in the native turn, left out of the text. */
  stripThinkTags?: boolean;
}

/** Assistant message fields worth keeping for a verbatim replay (reasoning fields are service extensions). */
const NATIVE_FIELDS = ['role', 'content', 'tool_calls', 'refusal', 'reasoning', 'reasoning_content', 'reasoning_details'] as const;

const THINK_TAGS = /<think>[\s\S]*?<\/think>\s*/g;

/**
 * OpenAI Chat Completions through the `openai` SDK, for OpenAI itself and every service that
 * speaks the same protocol (OpenRouter, MiniMax, local servers).
 */
export class ChatCompletionsAdapter implements ProviderAdapter {
  readonly name: ChatCompletionsProvider;

  constructor(
    private readonly flavour: ChatCompletionsFlavour,
    private readonly keys: ProviderKeys,
  ) {
    this.name = flavour.provider;
  }

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    const model = request.model.model;
    const key = this.name === 'local' ? (await this.keys('local'))?.trim() || undefined : await requireKey(this.name, this.keys, model);
    const client = new OpenAI({
      // A local server without authentication gets no Authorization header at all.
      apiKey: key ?? 'unused',
      baseURL: this.flavour.baseUrl,
      // The router owns retries and timeouts; an SDK retrying underneath would multiply both.
      maxRetries: 0,
      // Left unset on purpose: the SDK would otherwise send OPENAI_ORG_ID / OPENAI_PROJECT_ID
      // from the environment, to OpenRouter or MiniMax as well.
      organization: null,
      project: null,
      defaultHeaders: { ...this.flavour.headers, ...(key === undefined ? { Authorization: null } : {}) },
    });
    const body = this.body(request);
    try {
      if (request.stream) return await this.streamed(client, body, request, options.signal);
      const completion: ChatCompletion = await client.chat.completions.create(body, { signal: options.signal });
      const choice = completion.choices?.[0];
      if (!choice) throw badResponseError(this.name, model, 'no choices in the completion');
      const message = choice.message as unknown as WireMessage;
      const toolCalls = (message.tool_calls ?? []).filter((call) => call.type === undefined || call.type === 'function').map((call, index) => this.toolCall(model, call.id, index, call.function?.name, call.function?.arguments));
      const text = this.visibleText(message.content);
      const usage = completion.usage ? { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens } : undefined;
      return this.turn(request, text, toolCalls, choice.finish_reason, usage, pickNative(message));
    } catch (error) {
      throw this.failure(error, model, key, options.signal);
    }
  }

  private body(request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
    const messages: ChatCompletionMessageParam[] = [];
    if (request.system) messages.push({ role: 'system', content: request.system });
    messages.push(...toChatMessages(request.messages, this.name, request.model.model));
    const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    return {
      model: request.model.model,
      messages,
      [this.flavour.maxTokensField]: request.maxOutputTokens,
      ...(tools.length > 0 ? { tools } : {}),
      ...(request.outputSchema && wantsSchema(request)
        ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'final_answer', schema: request.outputSchema, strict: false } } }
        : {}),
      ...this.flavour.extraBody,
    };
  }

  /** Assembles the streamed turn: text deltas, tool call fragments by index, usage from the last chunk. */
  private async streamed(client: OpenAI, body: ChatCompletionCreateParamsNonStreaming, request: ModelRequest, signal: AbortSignal | undefined): Promise<AdapterTurn> {
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal });
    let content = '';
    let sawContent = false;
    const reasoning: { reasoning?: string; reasoning_content?: string; reasoning_details?: Record<string, unknown>[] } = {};
    const calls: { id?: string; name: string; args: string }[] = [];
    let finishReason: string | null = null;
    let usage: Usage | undefined;
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta as unknown as WireDelta;
      if (typeof delta.content === 'string') {
        content += delta.content;
        sawContent = true;
      }
      if (typeof delta.reasoning === 'string') reasoning.reasoning = (reasoning.reasoning ?? '') + delta.reasoning;
      if (typeof delta.reasoning_content === 'string') reasoning.reasoning_content = (reasoning.reasoning_content ?? '') + delta.reasoning_content;
      if (Array.isArray(delta.reasoning_details)) reasoning.reasoning_details = mergeReasoningDetails(reasoning.reasoning_details ?? [], delta.reasoning_details);
      for (const fragment of delta.tool_calls ?? []) {
        const slot = (calls[fragment.index] ??= { name: '', args: '' });
        if (fragment.id) slot.id = fragment.id;
        // The name arrives whole in the first fragment; some servers repeat it in later ones.
        if (fragment.function?.name && slot.name === '') slot.name = fragment.function.name;
        if (fragment.function?.arguments) slot.args += fragment.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    const slots = calls.filter(Boolean);
    const toolCalls = slots.map((slot, index) => this.toolCall(request.model.model, slot.id, index, slot.name, slot.args));
    const wireCalls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.rawArguments } }));
    const nativeMessage: Record<string, unknown> = {
      role: 'assistant',
      content: sawContent ? content : null,
      ...(wireCalls.length > 0 ? { tool_calls: wireCalls } : {}),
      ...reasoning,
    };
    return this.turn(request, this.visibleText(content), toolCalls, finishReason, usage, nativeMessage);
  }

  private toolCall(model: string, id: string | undefined, index: number, name: string | undefined, rawArguments: string | undefined): ToolCall {
    if (!name) throw badResponseError(this.name, model, `tool call ${index} has no function name`);
    return toolCallFromText(id || mintCallId('call_'), name, rawArguments ?? '');
  }

  private turn(request: ModelRequest, text: string, toolCalls: ToolCall[], finishReason: string | null, usage: Usage | undefined, nativeMessage: Record<string, unknown>): AdapterTurn {
    return {
      text,
      toolCalls,
      stopReason: stopReasonOf(mapFinishReason(finishReason), toolCalls),
      usage: usage ?? estimatedUsage(request, text, toolCalls),
      ...(usage ? {} : { usageEstimated: true }),
      native: native(this.name, request.model.model, nativeMessage),
    };
  }

  private visibleText(content: string | null | undefined): string {
    const text = content ?? '';
    return this.flavour.stripThinkTags ? text.replace(THINK_TAGS, '') : text;
  }

  private failure(error: unknown, model: string, key: string | undefined, signal: AbortSignal | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted || error instanceof APIUserAbortError || isAbortLike(error)) return abortedError(this.name, model, error);
    if (error instanceof APIConnectionTimeoutError) return new ProviderError('provider_timeout', `${this.name} ${model}: the request timed out`, { provider: this.name, model, cause: error });
    if (error instanceof APIConnectionError) return connectionError(this.name, model, error.cause ?? error);
    if (error instanceof APIError) {
      const body = error.error as { message?: unknown } | undefined;
      const serverMessage = typeof body?.message === 'string' ? body.message : null;
      if (typeof error.status === 'number') {
        return providerErrorFromHttp({ provider: this.name, model, status: error.status, headers: error.headers, serverMessage, serverCode: error.code, secret: key, cause: error });
      }
      // An error object in the middle of a stream: the request was accepted, then the server failed.
      return new ProviderError('provider_server_error', `${this.name} ${model}: the stream failed${serverMessage ? ` (${serverMessage.slice(0, 200)})` : ''}`, {
        provider: this.name,
        model,
        cause: error,
      });
    }
    return badResponseError(this.name, model, error instanceof Error ? error.message : 'unknown failure', error);
  }
}

interface WireToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface WireMessage {
  content?: string | null;
  tool_calls?: WireToolCall[];
  [field: string]: unknown;
}

interface WireDelta {
  content?: string | null;
  reasoning?: string;
  reasoning_content?: string;
  reasoning_details?: Record<string, unknown>[];
  tool_calls?: (WireToolCall & { index: number })[];
}

function pickNative(message: WireMessage): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const field of NATIVE_FIELDS) {
    const value = message[field];
    if (value !== undefined && !(field === 'refusal' && value === null)) kept[field] = value;
  }
  kept['role'] = 'assistant';
  return kept;
}

/** Streamed reasoning details arrive as fragments of the same entry (same index): their text is joined. */
function mergeReasoningDetails(into: Record<string, unknown>[], fragments: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const fragment of fragments) {
    const index = fragment['index'];
    const existing = typeof index === 'number' ? into.find((item) => item['index'] === index) : undefined;
    if (!existing) {
      into.push({ ...fragment });
      continue;
    }
    for (const [field, value] of Object.entries(fragment)) {
      const current = existing[field];
      existing[field] = typeof value === 'string' && typeof current === 'string' && ['text', 'summary', 'data'].includes(field) ? current + value : value;
    }
  }
  return into;
}

function mapFinishReason(reason: string | null): StopReason {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/** Neutral transcript to Chat Completions messages (without the system message). */
export function toChatMessages(messages: ChatMessage[], provider: ChatCompletionsProvider, model: string): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'tool') {
      for (const result of message.results) {
        // Chat Completions has no error flag on a tool result, so the text says it.
        out.push({ role: 'tool', tool_call_id: result.callId, content: result.isError ? `Error: ${result.content}` : result.content });
      }
    } else {
      const payload = nativePayload(message, provider, model);
      if (payload !== undefined) {
        out.push(payload as unknown as ChatCompletionMessageParam);
        continue;
      }
      out.push({
        role: 'assistant',
        content: message.content === '' && message.toolCalls.length > 0 ? null : message.content,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments === null ? JSON.stringify(argumentsForReplay(call) as JsonObject) : call.rawArguments },
              })),
            }
          : {}),
      });
    }
  }
  return out;
}
