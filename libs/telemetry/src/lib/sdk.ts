import { propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TelemetryOptions {
  serviceName: string;
  /** OTLP/HTTP endpoint; defaults to OTEL_EXPORTER_OTLP_ENDPOINT. Without one nothing is exported. */
  otlpEndpoint?: string;
  /** Replaces the exporter (tests pass an in-memory processor). */
  spanProcessors?: SpanProcessor[];
}

export interface Telemetry {
  exporting: boolean;
  shutdown(): Promise<void>;
}

let started: Telemetry | undefined;

/**
 * Starts the OpenTelemetry SDK. Call it before Nest (or anything traced) loads. Spans are
 * always created, so trace ids flow through events and NATS headers, but they are exported
 * only when an OTLP endpoint is configured.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  if (started) return started;
  const endpoint = options.otlpEndpoint ?? process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const processors =
    options.spanProcessors ??
    (endpoint
      ? [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }))]
      : [new NoopSpanProcessor()]);
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: processors,
    contextManager: new AsyncLocalStorageContextManager(),
    textMapPropagator: new W3CTraceContextPropagator(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    autoDetectResources: false,
  });
  sdk.start();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  started = {
    exporting: Boolean(endpoint) || options.spanProcessors !== undefined,
    shutdown: async () => {
      started = undefined;
      await sdk.shutdown();
    },
  };
  return started;
}
