import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { EventBus, GatewayEvent } from "../event-bus/event-bus.js";
import { GenAiMetrics } from "./genai-metrics.js";
import { RequestSpans, type SpanMaking } from "./request-spans.js";
import type { Tracing } from "./start-tracing.js";
import { registerRequestTrace, traceOfTurn } from "./trace-hooks.js";
import type { TracingConfig } from "./tracing-config.js";

/** The events spans and metrics are derived from; deltas only for a turn's first token unless contents are captured. */
const TURN_EVENTS = ["turn.started", "turn.completed", "turn.failed"] as const;
const DELTAS = ["reasoning.delta", "content.delta"] as const;

/**
 * The OpenTelemetry SDK for one gateway, loaded only when an OTLP endpoint
 * is configured (start-tracing.ts imports this file on demand): a tracer
 * provider with a batching exporter, a meter provider with a periodic one,
 * over OTLP/HTTP in protobuf or JSON. Nothing is registered globally, so
 * two gateways in one process keep their own.
 */
export async function startOpenTelemetry(config: TracingConfig, bus: EventBus): Promise<Tracing> {
  const resource = resourceFromAttributes({ ...config.resourceAttributes, "service.name": config.serviceName });
  const exporters = await exportersFor(config);
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: exporters.spans ? [new BatchSpanProcessor(exporters.spans)] : [],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: exporters.metrics ? [new PeriodicExportingMetricReader({ exporter: exporters.metrics, exportIntervalMillis: config.metricIntervalMs })] : [],
  });
  const making: SpanMaking = {
    tracer: tracerProvider.getTracer("carrierd"),
    propagator: new W3CTraceContextPropagator(),
    metrics: new GenAiMetrics(meterProvider.getMeter("carrierd")),
    captureContent: config.captureContent,
  };
  const unsubscribe = [
    bus.subscribe(observe, TURN_EVENTS, { untimed: true }),
    bus.subscribe(observe, DELTAS, { firstOfTurn: !config.captureContent, untimed: true }),
  ];
  return {
    tracer: { began: (request, response) => registerRequestTrace(response, new RequestSpans(making, request)) },
    async close() {
      for (const stop of unsubscribe) stop();
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** A turn's event, told to the span of the request whose turn it is (events of no traced turn are not). */
function observe(event: GatewayEvent): void {
  const trace = traceOfTurn(event.turn_id);
  if (!(trace instanceof RequestSpans)) return;
  switch (event.type) {
    case "turn.started":
      return trace.turnStarted(event);
    case "turn.completed":
    case "turn.failed":
      return trace.turnEnded(event);
    case "reasoning.delta":
      trace.firstToken();
      return trace.delta("reasoning", event.text);
    case "content.delta":
      trace.firstToken();
      return trace.delta("text", event.text);
  }
}

/** The OTLP/HTTP exporters of the configured protocol, each only for a signal with an endpoint. */
async function exportersFor(config: TracingConfig): Promise<{ spans?: SpanExporter; metrics?: PushMetricExporter }> {
  const headers = config.headers;
  const json = config.protocol === "http/json";
  const spans = config.tracesUrl
    ? new (json ? await import("@opentelemetry/exporter-trace-otlp-http") : await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter({
        url: config.tracesUrl,
        headers,
      })
    : undefined;
  const metrics = config.metricsUrl
    ? new (json ? await import("@opentelemetry/exporter-metrics-otlp-http") : await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter({
        url: config.metricsUrl,
        headers,
      })
    : undefined;
  return { spans, metrics };
}
