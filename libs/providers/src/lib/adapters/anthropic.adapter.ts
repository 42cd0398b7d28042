import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { JsonObject } from '@packetagent/contracts';
import type { ProviderConfig, ProviderKeys } from '../config';
import { abortedError, badResponseError, connectionError, ProviderError, providerErrorFromHttp } from '../errors';
import type { AdapterTurn, CallOptions, ChatMessage, ModelRequest, ProviderAdapter, StopReason, ToolCall, Usage } from '../provider.types';
import { argumentsForReplay, toolCallFromText, toolCallFromValue } from '../tool-arguments';
import { isAbortLike, native, nativePayload, requireKey, stopReasonOf, wantsSchema } from './common';

type MessageParam = Anthropic.MessageParam;
type ContentBlockParam = Anthropic.ContentBlockParam;
type Body = Anthropic.MessageCreateParamsNonStreaming;

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Anthropic Messages API through @anthropic-ai/sdk. */
export class AnthropicAdapter implements ProviderAdapter {
  readonly name = 'anthropic' as const;

  constructor(
    private readonly config: Pick<ProviderConfig, 'anthropic'>,
    private readonly keys: ProviderKeys,
  ) {}

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    const model = request.model.model;
    const key = await requireKey(this.name, this.keys, model);
    // The router owns retries and timeouts; an SDK retrying underneath would multiply both.
    const client = new Anthropic({ apiKey: key, baseURL: this.config.anthropic.baseUrl ?? DEFAULT_BASE_URL, maxRetries: 0 });
    const body = this.body(request);
    try {
      if (request.stream) return await this.streamed(client, body, model, options.signal);
      const message = await client.messages.create(body, { signal: options.signal });
      return this.turn(model, message.content as unknown as Block[], message.stop_reason, usageOf(message.usage));
    } catch (error) {
      throw this.failure(error, model, key, options.signal);
    }
  }

  private body(request: ModelRequest): Body {
    const model = request.model.model;
    return {
      model,
      max_tokens: request.maxOutputTokens,
      messages: toAnthropicMessages(request.messages, model),
      ...(request.system ? { system: request.system } : {}),
      ...(request.tools.length > 0
        ? { tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters as Anthropic.Tool.InputSchema })) }
        : {}),
      ...(request.outputSchema && wantsSchema(request) ? { output_config: { format: { type: 'json_schema' as const, schema: request.outputSchema } } } : {}),
    };
  }

  /** Rebuilds the message from the event stream, keeping tool input as the raw JSON text it arrived as. */
  private async streamed(client: Anthropic, body: Body, model: string, signal: AbortSignal | undefined): Promise<AdapterTurn> {
    const stream = await client.messages.create({ ...body, stream: true }, { signal });
    const blocks: Block[] = [];
    const inputText = new Map<number, string>();
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let stopReason: string | null = null;
    for await (const event of stream) {
      switch (event.type) {
        case 'message_start':
          usage = usageOf(event.message.usage);
          break;
        case 'content_block_start': {
          const block = { ...(event.content_block as unknown as Block) };
          if (block.type === 'tool_use') inputText.set(event.index, '');
          blocks[event.index] = block;
          break;
        }
        case 'content_block_delta': {
          const block = blocks[event.index];
          if (!block) throw badResponseError(this.name, model, `delta for unknown content block ${event.index}`);
          const delta = event.delta;
          if (delta.type === 'text_delta') block.text = `${block.text ?? ''}${delta.text}`;
          else if (delta.type === 'input_json_delta') inputText.set(event.index, `${inputText.get(event.index) ?? ''}${delta.partial_json}`);
          else if (delta.type === 'thinking_delta') block.thinking = `${block.thinking ?? ''}${delta.thinking}`;
          else if (delta.type === 'signature_delta') block.signature = delta.signature;
          else if (delta.type === 'citations_delta') block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
          break;
        }
        case 'message_delta':
          stopReason = event.delta.stop_reason ?? stopReason;
          usage = {
            inputTokens: event.usage.input_tokens === null ? usage.inputTokens : inputOf(event.usage),
            outputTokens: event.usage.output_tokens,
          };
          break;
        default:
          break;
      }
    }
    const calls = new Map<number, ToolCall>();
    for (const [index, text] of inputText) {
      const block = blocks[index]!;
      const call = toolCallFromText(String(block.id), String(block.name), text);
      calls.set(index, call);
      // The stored turn must be valid to send back; a call that could not be read replays as empty.
      block.input = call.arguments ?? {};
    }
    return this.turn(model, blocks.filter(Boolean), stopReason, usage, calls);
  }

  private turn(model: string, blocks: Block[], stopReason: string | null, usage: Usage, streamedCalls?: Map<number, ToolCall>): AdapterTurn {
    const text: string[] = [];
    const toolCalls: ToolCall[] = [];
    blocks.forEach((block, index) => {
      if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
      if (block.type === 'tool_use') toolCalls.push(streamedCalls?.get(index) ?? toolCallFromValue(String(block.id), String(block.name), block.input));
    });
    return {
      text: text.join(''),
      toolCalls,
      stopReason: stopReasonOf(mapStopReason(stopReason), toolCalls),
      usage,
      native: native(this.name, model, { role: 'assistant', content: blocks }),
    };
  }

  private failure(error: unknown, model: string, key: string, signal: AbortSignal | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted || error instanceof APIUserAbortError || isAbortLike(error)) return abortedError(this.name, model, error);
    if (error instanceof APIConnectionTimeoutError) return new ProviderError('provider_timeout', `${this.name} ${model}: the request timed out`, { provider: this.name, model, cause: error });
    if (error instanceof APIConnectionError) return connectionError(this.name, model, error.cause ?? error);
    if (error instanceof APIError) {
      if (typeof error.status === 'number') {
        return providerErrorFromHttp({ provider: this.name, model, status: error.status, headers: error.headers, serverMessage: error.apiMessage, secret: key, cause: error });
      }
      // An `error` event in the middle of a stream: the request was accepted, then the server failed.
      const kind = error.type ?? 'error';
      const code = kind === 'rate_limit_error' ? 'provider_rate_limited' : kind === 'overloaded_error' || kind === 'api_error' ? 'provider_server_error' : 'provider_bad_response';
      return new ProviderError(code, `${this.name} ${model}: the stream failed (${kind})`, { provider: this.name, model, cause: error });
    }
    return badResponseError(this.name, model, error instanceof Error ? error.message : 'unknown failure', error);
  }
}

/** A content block as it travels: the fields we read, plus whatever else the API put there. */
interface Block {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  citations?: unknown;
  id?: string;
  name?: string;
  input?: unknown;
  [field: string]: unknown;
}

function inputOf(usage: { input_tokens: number | null; cache_creation_input_tokens: number | null; cache_read_input_tokens: number | null }): number {
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

function usageOf(usage: Anthropic.Usage): Usage {
  return { inputTokens: inputOf(usage), outputTokens: usage.output_tokens };
}

function mapStopReason(reason: string | null): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/**
 * Neutral transcript to Messages API form. Tool results travel in a user message, so they and a
 * user message after them are merged into one turn.
 */
export function toAnthropicMessages(messages: ChatMessage[], model: string): MessageParam[] {
  const out: MessageParam[] = [];
  const pushUser = (blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role: 'user', content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      if (message.content !== '') pushUser([{ type: 'text', text: message.content }]);
    } else if (message.role === 'tool') {
      pushUser(
        message.results.map((result) => ({
          type: 'tool_result' as const,
          tool_use_id: result.callId,
          ...(result.content !== '' ? { content: result.content } : {}),
          ...(result.isError ? { is_error: true } : {}),
        })),
      );
    } else {
      const payload = nativePayload(message, 'anthropic', model);
      if (payload !== undefined) {
        out.push(payload as unknown as MessageParam);
        continue;
      }
      const content: ContentBlockParam[] = [];
      if (message.content !== '') content.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsForReplay(call) as JsonObject });
      if (content.length > 0) out.push({ role: 'assistant', content });
    }
  }
  return out;
}
