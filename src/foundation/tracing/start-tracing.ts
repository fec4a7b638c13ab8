import type { EventBus } from "../event-bus/event-bus.js";
import type { RequestTracer } from "./trace-hooks.js";
import { tracingConfig } from "./tracing-config.js";

/** A gateway's tracing, when it exports (docs/operators.md#opentelemetry). */
export interface Tracing {
  /** Starts each request's server span (the HTTP server calls it). */
  readonly tracer: RequestTracer;
  /** Exports what is still buffered, then stops. */
  close(): Promise<void>;
}

/**
 * Tracing as the environment asks for it: undefined, with nothing loaded,
 * when no OTLP endpoint is set; otherwise the OpenTelemetry SDK, imported
 * now and not before.
 */
export async function startTracing(env: Readonly<Record<string, string | undefined>>, bus: EventBus): Promise<Tracing | undefined> {
  const config = tracingConfig(env);
  if (!config) return undefined;
  const { startOpenTelemetry } = await import("./open-telemetry.js");
  return startOpenTelemetry(config, bus);
}
