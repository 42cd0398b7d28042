import type { ServerResponse } from 'node:http';
import { argumentsValue, bodyField, DEFAULT_FAKE_USAGE, FakeProviderServer, fragments, type FakeErrorReply, type FakeTurnReply, type RecordedRequest } from './fake-server';

/** Ollama's native chat API (POST /api/chat): JSON, or NDJSON when streaming (its default). */
export class FakeOllamaServer extends FakeProviderServer {
  get baseUrl(): string {
    return this.url;
  }

  protected accepts(request: RecordedRequest): boolean {
    return request.method === 'POST' && request.path === '/api/chat';
  }

  protected isStreaming(request: RecordedRequest): boolean {
    return bodyField(request, 'stream') !== false;
  }

  protected writeError(res: ServerResponse, _request: RecordedRequest, error: FakeErrorReply): void {
    const headers: Record<string, string> = { ...error.headers };
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
    this.writeJson(res, error.status, { error: error.message ?? `fake error ${error.status}` }, headers);
  }

  protected writeTurn(res: ServerResponse, request: RecordedRequest, turn: FakeTurnReply, streaming: boolean): void {
    const model = String(bodyField(request, 'model'));
    const created_at = new Date(1_700_000_000_000).toISOString();
    const usage = turn.usage ?? DEFAULT_FAKE_USAGE;
    const counts = turn.omitUsage ? {} : { prompt_eval_count: usage.inputTokens, eval_count: usage.outputTokens };
    const toolCalls = (turn.toolCalls ?? []).map((call) => ({ function: { name: call.name, arguments: argumentsValue(call.arguments) } }));
    const doneReason = turn.stop === 'max_tokens' ? 'length' : 'stop';
    const final = { model, created_at, done: true, done_reason: doneReason, total_duration: 1_000_000, ...counts };
    if (!streaming) {
      this.writeJson(res, 200, {
        ...final,
        message: {
          role: 'assistant',
          content: turn.text ?? '',
          ...(turn.reasoning !== undefined ? { thinking: turn.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
      });
      return;
    }
    const lines: unknown[] = [];
    if (turn.reasoning !== undefined) lines.push({ model, created_at, message: { role: 'assistant', content: '', thinking: turn.reasoning }, done: false });
    for (const piece of fragments(turn.text ?? '', 4)) lines.push({ model, created_at, message: { role: 'assistant', content: piece }, done: false });
    if (toolCalls.length > 0) lines.push({ model, created_at, message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false });
    lines.push({ ...final, message: { role: 'assistant', content: '' } });
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const line of lines) res.write(`${JSON.stringify(line)}\n`);
    res.end();
  }
}
