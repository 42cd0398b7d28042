import type { ServerResponse } from 'node:http';
import {
  argumentsValue,
  bodyField,
  DEFAULT_FAKE_USAGE,
  FakeProviderServer,
  fragments,
  writeSse,
  type FakeErrorReply,
  type FakeTurnReply,
  type RecordedRequest,
} from './fake-server';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Anthropic's Messages API (POST /v1/messages), JSON or server-sent events. */
export class FakeAnthropicServer extends FakeProviderServer {
  private counter = 0;

  get baseUrl(): string {
    return this.url;
  }

  protected accepts(request: RecordedRequest): boolean {
    return request.method === 'POST' && request.path === '/v1/messages';
  }

  protected isStreaming(request: RecordedRequest): boolean {
    return bodyField(request, 'stream') === true;
  }

  protected writeError(res: ServerResponse, _request: RecordedRequest, error: FakeErrorReply): void {
    const headers: Record<string, string> = { 'request-id': `req_fake_${++this.counter}`, ...error.headers };
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
    const type = ERROR_TYPES[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error');
    this.writeJson(res, error.status, { type: 'error', error: { type, message: error.message ?? `fake ${type}` } }, headers);
  }

  protected writeTurn(res: ServerResponse, request: RecordedRequest, turn: FakeTurnReply, streaming: boolean): void {
    const id = `msg_fake_${++this.counter}`;
    const model = String(bodyField(request, 'model'));
    const usage = turn.usage ?? DEFAULT_FAKE_USAGE;
    const calls = (turn.toolCalls ?? []).map((call, index) => ({ ...call, id: call.id ?? `toolu_fake_${this.counter}_${index}` }));
    const stop = turn.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
    const signature = `sig_fake_${this.counter}`;
    if (!streaming) {
      const content: unknown[] = [];
      if (turn.reasoning !== undefined) content.push({ type: 'thinking', thinking: turn.reasoning, signature });
      if (turn.text !== undefined) content.push({ type: 'text', text: turn.text, citations: null });
      for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsValue(call.arguments), caller: { type: 'direct' } });
      this.writeJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: turn.omitUsage ? undefined : { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
      return;
    }
    const events: { event: string; data: unknown }[] = [];
    const send = (event: string, data: Record<string, unknown>) => events.push({ event, data: { type: event, ...data } });
    send('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    send('ping', {});
    let index = 0;
    if (turn.reasoning !== undefined) {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of fragments(turn.reasoning, 6)) send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature } });
      send('content_block_stop', { index });
      index++;
    }
    if (turn.text !== undefined) {
      send('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } });
      for (const piece of fragments(turn.text, 4)) send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      send('content_block_stop', { index });
      index++;
    }
    for (const call of calls) {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {}, caller: { type: 'direct' } } });
      for (const piece of fragments(call.arguments, 5)) send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      send('content_block_stop', { index });
      index++;
    }
    send('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { input_tokens: null, output_tokens: usage.outputTokens, cache_creation_input_tokens: null, cache_read_input_tokens: null },
    });
    send('message_stop', {});
    writeSse(res, events);
  }
}
