import type { ServerResponse } from 'node:http';
import { bodyField, DEFAULT_FAKE_USAGE, FakeProviderServer, fragments, writeSse, type FakeErrorReply, type FakeTurnReply, type RecordedRequest } from './fake-server';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'server_error',
};

/**
 * OpenAI Chat Completions (POST …/chat/completions), as OpenAI, OpenRouter, MiniMax and local
 * servers speak it. `basePath` is where the SDK's base URL points (`/v1`, `/api/v1`).
 */
export class FakeOpenAiServer extends FakeProviderServer {
  private counter = 0;

  constructor(private readonly basePath = '/v1') {
    super();
  }

  get baseUrl(): string {
    return `${this.url}${this.basePath}`;
  }

  protected accepts(request: RecordedRequest): boolean {
    return request.method === 'POST' && request.path === `${this.basePath}/chat/completions`;
  }

  protected isStreaming(request: RecordedRequest): boolean {
    return bodyField(request, 'stream') === true;
  }

  protected writeError(res: ServerResponse, _request: RecordedRequest, error: FakeErrorReply): void {
    const headers: Record<string, string> = { 'x-request-id': `req_fake_${++this.counter}`, ...error.headers };
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
    const type = ERROR_TYPES[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request_error');
    this.writeJson(res, error.status, { error: { message: error.message ?? `fake ${type}`, type, param: null, code: error.code ?? null } }, headers);
  }

  protected writeTurn(res: ServerResponse, request: RecordedRequest, turn: FakeTurnReply, streaming: boolean): void {
    const id = `chatcmpl-fake${++this.counter}`;
    const model = String(bodyField(request, 'model'));
    const created = 1_700_000_000 + this.counter;
    const usage = turn.usage ?? DEFAULT_FAKE_USAGE;
    const wireUsage = { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
    const calls = (turn.toolCalls ?? []).map((call, index) => ({ ...call, id: call.id ?? `call_fake_${this.counter}_${index}` }));
    const finish = turn.stop === 'max_tokens' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';
    const reasoningDetails = turn.reasoning === undefined ? undefined : [{ type: 'reasoning.text', id: `rd_${this.counter}`, format: 'unknown', index: 0, text: turn.reasoning }];
    if (!streaming) {
      this.writeJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: turn.text ?? null,
              refusal: null,
              annotations: [],
              ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
              ...(reasoningDetails ? { reasoning_details: reasoningDetails } : {}),
            },
            finish_reason: finish,
            logprobs: null,
          },
        ],
        ...(turn.omitUsage ? {} : { usage: wireUsage }),
      });
      return;
    }
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      data: { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] },
    });
    const events: { data: unknown }[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    if (reasoningDetails) {
      for (const piece of fragments(turn.reasoning ?? '', 6)) events.push(chunk({ reasoning_details: [{ ...reasoningDetails[0], text: piece }] }));
    }
    for (const piece of fragments(turn.text ?? '', 4)) events.push(chunk({ content: piece }));
    calls.forEach((call, index) => {
      events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (const piece of fragments(call.arguments, 5)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    events.push(chunk({}, finish));
    if (!turn.omitUsage) events.push({ data: { id, object: 'chat.completion.chunk', created, model, choices: [], usage: wireUsage } });
    writeSse(res, events, '[DONE]');
  }
}
