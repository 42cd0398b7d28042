import type { ServerResponse } from 'node:http';
import { argumentsValue, DEFAULT_FAKE_USAGE, FakeProviderServer, fragments, writeSse, type FakeErrorReply, type FakeTurnReply, type RecordedRequest } from './fake-server';

const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** The model a recorded Gemini request was for (it travels in the path). */
export function geminiModelOf(request: RecordedRequest): string | undefined {
  return ROUTE.exec(request.path)?.[1];
}

/** Gemini's generateContent and streamGenerateContent?alt=sse (v1beta). */
export class FakeGeminiServer extends FakeProviderServer {
  private counter = 0;

  get baseUrl(): string {
    return this.url;
  }

  protected accepts(request: RecordedRequest): boolean {
    return request.method === 'POST' && ROUTE.test(request.path);
  }

  protected isStreaming(request: RecordedRequest): boolean {
    return ROUTE.exec(request.path)?.[2] === 'streamGenerateContent';
  }

  protected writeError(res: ServerResponse, _request: RecordedRequest, error: FakeErrorReply): void {
    const status = STATUS_NAMES[error.status] ?? (error.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
    // Gemini says how long to wait in a RetryInfo detail of the error, not in a header.
    const details = error.retryAfterSeconds === undefined ? [] : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${error.retryAfterSeconds}s` }];
    this.writeJson(res, error.status, { error: { code: error.status, message: error.message ?? `fake ${status}`, status, details } }, error.headers);
  }

  protected writeTurn(res: ServerResponse, request: RecordedRequest, turn: FakeTurnReply, streaming: boolean): void {
    this.counter++;
    const usage = turn.usage ?? DEFAULT_FAKE_USAGE;
    const usageMetadata = turn.omitUsage
      ? undefined
      : {
          promptTokenCount: usage.inputTokens,
          candidatesTokenCount: usage.outputTokens,
          ...(usage.reasoningTokens === undefined ? {} : { thoughtsTokenCount: usage.reasoningTokens }),
          totalTokenCount: usage.inputTokens + usage.outputTokens + (usage.reasoningTokens ?? 0),
        };
    const finishReason = turn.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
    const signature = `c2lnX2Zha2Vf${this.counter}`;
    // Gemini puts the thought signature on the first function call part when it thought.
    const callParts = (turn.toolCalls ?? []).map((call, index) => ({
      functionCall: { name: call.name, args: argumentsValue(call.arguments) },
      ...(index === 0 && turn.reasoning !== undefined ? { thoughtSignature: signature } : {}),
    }));
    const envelope = (parts: unknown[], last: boolean) => ({
      candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason, index: 0 } : { index: 0 }) }],
      ...(last && usageMetadata ? { usageMetadata } : {}),
      modelVersion: geminiModelOf(request),
      responseId: `resp_fake_${this.counter}`,
    });
    if (!streaming) {
      const parts: unknown[] = [];
      if (turn.reasoning !== undefined) parts.push({ text: turn.reasoning, thought: true });
      if (turn.text !== undefined) parts.push({ text: turn.text });
      parts.push(...callParts);
      this.writeJson(res, 200, envelope(parts, true));
      return;
    }
    const chunks: unknown[][] = [];
    if (turn.reasoning !== undefined) chunks.push([{ text: turn.reasoning, thought: true }]);
    for (const piece of fragments(turn.text ?? '', 4)) chunks.push([{ text: piece }]);
    if (callParts.length > 0) chunks.push(callParts);
    if (chunks.length === 0) chunks.push([]);
    writeSse(
      res,
      chunks.map((parts, index) => ({ data: envelope(parts, index === chunks.length - 1) })),
    );
  }
}
