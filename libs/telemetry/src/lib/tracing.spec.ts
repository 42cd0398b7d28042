import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTelemetry, type Telemetry } from './sdk';
import { contextFromTraceparent, currentTraceparent, extractTraceContext, injectTraceContext, withSpan } from './tracing';

class MapCarrier {
  readonly values = new Map<string, string>();
  get(key: string) {
    return this.values.get(key);
  }
  set(key: string, value: string) {
    this.values.set(key, value);
  }
}

describe('tracing helpers', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  beforeAll(() => {
    telemetry = startTelemetry({ serviceName: 'test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
  });
  afterAll(() => telemetry.shutdown());

  it('has no traceparent outside a span', () => {
    expect(currentTraceparent()).toBeNull();
  });

  it('carries the active trace through headers into a child span', async () => {
    const carrier = new MapCarrier();
    const parentTraceId = await withSpan('producer', {}, async (span) => {
      injectTraceContext(carrier);
      return span.spanContext().traceId;
    });
    expect(carrier.get('traceparent')).toMatch(new RegExp(`^00-${parentTraceId}-[0-9a-f]{16}-01$`));

    const childTraceId = await withSpan('consumer', { parent: extractTraceContext(carrier) }, async (span) => span.spanContext().traceId);
    expect(childTraceId).toBe(parentTraceId);
  });

  it('continues a trace from a stored traceparent', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traceId = await withSpan('replay', { parent: contextFromTraceparent(traceparent) }, async (span) => span.spanContext().traceId);
    expect(traceId).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('records a failure on the span and rethrows it', async () => {
    await expect(withSpan('failing', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const failed = exporter.getFinishedSpans().find((span) => span.name === 'failing');
    expect(failed?.status.code).toBe(2);
    expect(failed?.events[0]?.name).toBe('exception');
  });
});
