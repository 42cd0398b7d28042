import type { JsonObject } from '@packetagent/contracts';
import type { ProviderConfig, ProviderKeys } from '../config';
import { abortedError, badResponseError, connectionError, ProviderError, providerErrorFromHttp } from '../errors';
import type { AdapterTurn, CallOptions, ChatMessage, ModelRequest, ProviderAdapter, StopReason, ToolCall, Usage } from '../provider.types';
import { argumentsForReplay, toolCallFromValue } from '../tool-arguments';
import { estimatedUsage, isAbortLike, isFetchFailure, mintCallId, native, nativePayload, stopReasonOf, wantsSchema } from './common';
import { requireLocalBaseUrl } from './local-openai.adapter';

interface OllamaToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

interface OllamaMessage {
  role: string;
  content?: string;
  thinking?: string;
  tool_calls?: OllamaToolCall[];
  [field: string]: unknown;
}

interface OllamaChunk {
  message?: OllamaMessage;
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}

/**
 * Ollama's native /api/chat over fetch (there is no Ollama SDK among our dependencies). Streaming
 * answers are NDJSON, one chunk per line, the last one with `done: true` and the token counts.
 */
export class OllamaAdapter implements ProviderAdapter {
  readonly name = 'local' as const;
  private readonly endpoint: string;

  constructor(
    private readonly config: Pick<ProviderConfig, 'local'>,
    private readonly keys: ProviderKeys,
  ) {
    this.endpoint = `${requireLocalBaseUrl(config).replace(/\/+$/, '')}/api/chat`;
  }

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    const model = request.model.model;
    const key = (await this.keys('local'))?.trim() || undefined;
    const body = {
      model,
      messages: [...(request.system ? [{ role: 'system', content: request.system }] : []), ...toOllamaMessages(request.messages, model)],
      ...(request.tools.length > 0
        ? { tools: request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) }
        : {}),
      ...(request.outputSchema && wantsSchema(request) ? { format: request.outputSchema } : {}),
      // Ollama's default context is a few thousand tokens whatever the model can hold.
      options: { num_predict: request.maxOutputTokens, num_ctx: request.model.entry.contextWindow },
      stream: request.stream === true,
    };
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body),
        signal: options.signal,
      });
      if (!response.ok) {
        const text = await response.text();
        throw providerErrorFromHttp({ provider: this.name, model, status: response.status, headers: response.headers, serverMessage: errorText(text), secret: key });
      }
      if (!request.stream) {
        const chunk = (await response.json()) as OllamaChunk;
        if (!chunk.message) throw badResponseError(this.name, model, 'no message in the answer');
        return this.turn(request, chunk.message, chunk);
      }
      return await this.streamed(request, response);
    } catch (error) {
      throw this.failure(error, model, options.signal);
    }
  }

  private async streamed(request: ModelRequest, response: Response): Promise<AdapterTurn> {
    const model = request.model.model;
    if (!response.body) throw badResponseError(this.name, model, 'empty stream');
    const message: OllamaMessage = { role: 'assistant', content: '' };
    let last: OllamaChunk = {};
    const decoder = new TextDecoder();
    let buffered = '';
    const take = (line: string) => {
      if (line.trim() === '') return;
      let chunk: OllamaChunk;
      try {
        chunk = JSON.parse(line) as OllamaChunk;
      } catch (error) {
        throw badResponseError(this.name, model, 'a stream line is not JSON', error);
      }
      if (chunk.error) throw new ProviderError('provider_server_error', `${this.name} ${model}: the stream failed (${chunk.error.slice(0, 200)})`, { provider: this.name, model });
      const part = chunk.message;
      if (part?.content) message.content += part.content;
      if (part?.thinking) message.thinking = `${message.thinking ?? ''}${part.thinking}`;
      if (part?.tool_calls?.length) message.tool_calls = [...(message.tool_calls ?? []), ...part.tool_calls];
      if (chunk.done) last = chunk;
    };
    for await (const bytes of response.body) {
      buffered += decoder.decode(bytes as Uint8Array, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        take(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    }
    take(buffered + decoder.decode());
    if (!last.done) throw new ProviderError('provider_connection_failed', `${this.name} ${model}: the stream ended before its last chunk`, { provider: this.name, model });
    return this.turn(request, message, last);
  }

  private turn(request: ModelRequest, message: OllamaMessage, final: OllamaChunk): AdapterTurn {
    const model = request.model.model;
    const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((call, index) => {
      const name = call.function?.name;
      if (!name) throw badResponseError(this.name, model, `tool call ${index} has no function name`);
      return toolCallFromValue(call.id || mintCallId('call_'), name, call.function?.arguments);
    });
    const text = message.content ?? '';
    const usage: Usage | undefined =
      final.prompt_eval_count === undefined && final.eval_count === undefined ? undefined : { inputTokens: final.prompt_eval_count ?? 0, outputTokens: final.eval_count ?? 0 };
    return {
      text,
      toolCalls,
      stopReason: stopReasonOf(mapDoneReason(final.done_reason), toolCalls),
      usage: usage ?? estimatedUsage(request, text, toolCalls),
      ...(usage ? {} : { usageEstimated: true }),
      native: native(this.name, model, message),
    };
  }

  private failure(error: unknown, model: string, signal: AbortSignal | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted || isAbortLike(error)) return abortedError(this.name, model, error);
    if (isFetchFailure(error)) return connectionError(this.name, model, error);
    return badResponseError(this.name, model, error instanceof Error ? error.message : 'unknown failure', error);
  }
}

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : text;
  } catch {
    return text;
  }
}

function mapDoneReason(reason: string | undefined): StopReason {
  if (reason === 'stop') return 'end_turn';
  if (reason === 'length') return 'max_tokens';
  return reason === undefined ? 'end_turn' : 'other';
}

/** Neutral transcript to Ollama chat messages (without the system message). */
export function toOllamaMessages(messages: ChatMessage[], model: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'tool') {
      for (const result of message.results) {
        out.push({ role: 'tool', tool_name: result.name, content: result.isError ? `Error: ${result.content}` : result.content });
      }
    } else {
      const payload = nativePayload(message, 'local', model);
      if (payload !== undefined) {
        out.push(payload as JsonObject);
        continue;
      }
      out.push({
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls.length > 0 ? { tool_calls: message.toolCalls.map((call) => ({ function: { name: call.name, arguments: argumentsForReplay(call) } })) } : {}),
      });
    }
  }
  return out;
}
