import type { Content, GenerateContentParameters, GenerateContentResponse, Part } from '@google/genai' with { 'resolution-mode': 'import' };
import type { ProviderConfig, ProviderKeys } from '../config';
import { abortedError, badResponseError, connectionError, ProviderError, providerErrorFromHttp, retryAfterMsFromHeaders } from '../errors';
import type { AdapterTurn, CallOptions, ChatMessage, ModelRequest, ProviderAdapter, StopReason, ToolCall, Usage } from '../provider.types';
import { argumentsForReplay, toolCallFromValue } from '../tool-arguments';
import { estimatedUsage, isAbortLike, isFetchFailure, mintCallId, native, nativePayload, requireKey, stopReasonOf, wantsSchema } from './common';

/**
 * Gemini 2.5 sends function calls without ids. The ids we mint for them are ours alone and are
 * never sent back, so Gemini pairs results with calls by name and order as it expects.
 */
const MINTED_ID_PREFIX = 'gemini-call-';

type GenAiSdk = typeof import('@google/genai', { with: { 'resolution-mode': 'import' } });
let sdk: Promise<GenAiSdk> | undefined;

/**
 * @google/genai declares its types as an ES module, which a CommonJS file may not import
 * statically; a dynamic import loads it (once) in both the compiled app and the tests.
 */
function loadSdk(): Promise<GenAiSdk> {
  sdk ??= import('@google/genai');
  return sdk;
}

/** Gemini generateContent / streamGenerateContent through @google/genai. */
export class GeminiAdapter implements ProviderAdapter {
  readonly name = 'gemini' as const;

  constructor(
    private readonly config: Pick<ProviderConfig, 'gemini'>,
    private readonly keys: ProviderKeys,
  ) {}

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    const model = request.model.model;
    const key = await requireKey(this.name, this.keys, model);
    // The SDK's ApiError keeps only status and body, so the headers of the last answer are
    // caught here to read retry-after from.
    let lastHeaders: Headers | undefined;
    const fetchRecordingHeaders: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      lastHeaders = response.headers;
      return response;
    };
    const { GoogleGenAI, ApiError } = await loadSdk();
    const client = new GoogleGenAI({
      apiKey: key,
      vertexai: false,
      // No retryOptions: the SDK then makes exactly one attempt, and the router retries.
      httpOptions: { ...(this.config.gemini.baseUrl ? { baseUrl: this.config.gemini.baseUrl } : {}), fetch: fetchRecordingHeaders },
    });
    const params = this.params(request, options.signal);
    try {
      if (request.stream) {
        const parts: Part[] = [];
        let finishReason: string | undefined;
        let usage: Usage | undefined;
        for await (const chunk of await client.models.generateContentStream(params)) {
          const candidate = chunk.candidates?.[0];
          for (const part of candidate?.content?.parts ?? []) appendPart(parts, part);
          finishReason = candidate?.finishReason ?? finishReason;
          usage = usageOf(chunk) ?? usage;
        }
        return this.turn(request, { role: 'model', parts }, finishReason, usage);
      }
      const response = await client.models.generateContent(params);
      const candidate = response.candidates?.[0];
      if (!candidate) throw badResponseError(this.name, model, blockedReason(response) ?? 'no candidate in the answer');
      return this.turn(request, candidate.content ?? { role: 'model', parts: [] }, candidate.finishReason, usageOf(response));
    } catch (error) {
      throw this.failure(error instanceof ApiError ? { status: error.status, body: error.message, error } : error, model, key, options.signal, lastHeaders);
    }
  }

  private params(request: ModelRequest, signal: AbortSignal | undefined): GenerateContentParameters {
    const tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters }));
    // Gemini 2.5 refuses a JSON response type together with function calling, so the schema is
    // asked for only on a turn that offers no tools.
    const schema = request.outputSchema && wantsSchema(request) && tools.length === 0 ? { responseMimeType: 'application/json', responseJsonSchema: request.outputSchema } : {};
    return {
      model: request.model.model,
      contents: toGeminiContents(request.messages, request.model.model),
      config: {
        ...(request.system ? { systemInstruction: request.system } : {}),
        maxOutputTokens: request.maxOutputTokens,
        ...(tools.length > 0 ? { tools: [{ functionDeclarations: tools }] } : {}),
        ...schema,
        automaticFunctionCalling: { disable: true },
        // The SDK would otherwise re-request a dropped stream itself; retries are the router's.
        automaticContinuation: false,
        ...(signal ? { abortSignal: signal } : {}),
      },
    };
  }

  private turn(request: ModelRequest, content: Content, finishReason: string | undefined, usage: Usage | undefined): AdapterTurn {
    const text: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const part of content.parts ?? []) {
      if (typeof part.text === 'string' && !part.thought) text.push(part.text);
      if (part.functionCall) {
        const call = part.functionCall;
        if (!call.name) throw badResponseError(this.name, request.model.model, 'function call without a name');
        toolCalls.push(toolCallFromValue(call.id || mintCallId(MINTED_ID_PREFIX), call.name, call.args));
      }
    }
    const joined = text.join('');
    return {
      text: joined,
      toolCalls,
      stopReason: stopReasonOf(mapFinishReason(finishReason), toolCalls),
      usage: usage ?? estimatedUsage(request, joined, toolCalls),
      ...(usage ? {} : { usageEstimated: true }),
      native: native(this.name, request.model.model, { role: 'model', parts: content.parts ?? [] }),
    };
  }

  private failure(error: unknown, model: string, key: string, signal: AbortSignal | undefined, headers: Headers | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted || isAbortLike(error)) return abortedError(this.name, model, error);
    if (isHttpFailure(error)) {
      const body = parseErrorBody(error.body);
      return providerErrorFromHttp({
        provider: this.name,
        model,
        status: error.status,
        headers,
        serverMessage: body.message,
        secret: key,
        retryAfterMs: body.retryAfterMs ?? retryAfterMsFromHeaders(headers),
        cause: error.error,
      });
    }
    if (isFetchFailure(error)) return connectionError(this.name, model, error);
    return badResponseError(this.name, model, error instanceof Error ? error.message : 'unknown failure', error);
  }
}

/** The SDK's ApiError, unpacked where the class is at hand. */
interface HttpFailureOf {
  status: number;
  body: string;
  error: Error;
}

function isHttpFailure(value: unknown): value is HttpFailureOf {
  return typeof value === 'object' && value !== null && typeof (value as HttpFailureOf).status === 'number' && typeof (value as HttpFailureOf).body === 'string';
}

/** Streamed text arrives in many parts; consecutive plain text parts are joined so the stored turn stays compact. */
function appendPart(parts: Part[], part: Part): void {
  const last = parts[parts.length - 1];
  if (last && isPlainText(last) && isPlainText(part) && Boolean(last.thought) === Boolean(part.thought)) {
    last.text = `${last.text ?? ''}${part.text ?? ''}`;
    return;
  }
  parts.push({ ...part });
}

/** Text with nothing attached (a thought signature, for one, must stay on its own part). */
function isPlainText(part: Part): boolean {
  return typeof part.text === 'string' && Object.keys(part).every((field) => field === 'text' || field === 'thought');
}

function usageOf(response: GenerateContentResponse): Usage | undefined {
  const meta = response.usageMetadata;
  if (!meta || (meta.promptTokenCount === undefined && meta.candidatesTokenCount === undefined)) return undefined;
  // Thinking tokens are billed as output; tool-use prompt tokens as input.
  return {
    inputTokens: (meta.promptTokenCount ?? 0) + (meta.toolUsePromptTokenCount ?? 0),
    outputTokens: (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0),
  };
}

function blockedReason(response: GenerateContentResponse): string | undefined {
  const reason = response.promptFeedback?.blockReason;
  return reason ? `prompt blocked (${reason})` : undefined;
}

function mapFinishReason(reason: string | undefined): StopReason {
  if (reason === 'STOP') return 'end_turn';
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  return 'other';
}

/** Reads the Google error envelope, including the RetryInfo detail Gemini sends with a 429. */
function parseErrorBody(text: string): { message?: string; retryAfterMs?: number } {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; details?: { '@type'?: string; retryDelay?: unknown }[] } };
    const message = typeof body.error?.message === 'string' ? body.error.message : undefined;
    const delay = body.error?.details?.find((detail) => detail['@type']?.endsWith('google.rpc.RetryInfo'))?.retryDelay;
    const seconds = typeof delay === 'string' ? Number(delay.replace(/s$/, '')) : NaN;
    return { message, retryAfterMs: Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined };
  } catch {
    return { message: text };
  }
}

/** Neutral transcript to Gemini contents; consecutive turns of one role are merged, as Gemini expects alternation. */
export function toGeminiContents(messages: ChatMessage[], model: string): Content[] {
  const out: Content[] = [];
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.parts = [...(last.parts ?? []), ...parts];
    else out.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      push('user', [{ text: message.content }]);
    } else if (message.role === 'tool') {
      push(
        'user',
        message.results.map((result) => ({
          functionResponse: {
            ...(result.callId.startsWith(MINTED_ID_PREFIX) ? {} : { id: result.callId }),
            name: result.name,
            response: result.isError ? { error: result.content } : { output: result.content },
          },
        })),
      );
    } else {
      const payload = nativePayload(message, 'gemini', model);
      if (payload !== undefined) {
        const stored = payload as unknown as Content;
        push('model', stored.parts ?? []);
        continue;
      }
      const parts: Part[] = [];
      if (message.content !== '') parts.push({ text: message.content });
      for (const call of message.toolCalls) {
        parts.push({ functionCall: { ...(call.id.startsWith(MINTED_ID_PREFIX) ? {} : { id: call.id }), name: call.name, args: argumentsForReplay(call) } });
      }
      push('model', parts);
    }
  }
  return out;
}
