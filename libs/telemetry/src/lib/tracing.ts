import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

const TRACER = 'packetagent';

export interface HeaderCarrier {
  get(key: string): string | undefined | null;
  set(key: string, value: string): void;
}

/** Runs `fn` inside a new active span; records the error and rethrows when it fails. */
export async function withSpan<T>(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : new Error(String(error)));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The W3C `traceparent` of the active span, or null outside any trace. */
export function currentTraceparent(ctx: Context = context.active()): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier['traceparent'] ?? null;
}

/** Writes the active trace context into message headers (W3C traceparent / tracestate). */
export function injectTraceContext(headers: HeaderCarrier, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
}

/** Reads a trace context from message headers; returns the active context when there is none. */
export function extractTraceContext(headers: HeaderCarrier | undefined): Context {
  if (!headers) return context.active();
  return propagation.extract(context.active(), headers, {
    get: (carrier, key) => carrier.get(key) ?? undefined,
    keys: () => ['traceparent', 'tracestate'],
  });
}

/** A context whose parent is the given traceparent (e.g. read from an event's metadata). */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent) return context.active();
  return propagation.extract(context.active(), { traceparent });
}

export { SpanKind };
