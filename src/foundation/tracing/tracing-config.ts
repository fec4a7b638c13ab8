/**
 * Whether and where carrierd exports traces and metrics, from the standard
 * OpenTelemetry environment (https://opentelemetry.io/docs/specs/otel/protocol/exporter/).
 * Read without loading any OpenTelemetry package: with no endpoint set the
 * answer is undefined and nothing more happens.
 */
export interface TracingConfig {
  /** Where spans are posted (OTLP/HTTP), or undefined when only metrics are exported. */
  readonly tracesUrl: string | undefined;
  readonly metricsUrl: string | undefined;
  readonly protocol: "http/protobuf" | "http/json";
  readonly headers: Record<string, string>;
  readonly serviceName: string;
  readonly resourceAttributes: Record<string, string>;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: messages, answers and reasoning on the spans. */
  readonly captureContent: boolean;
  readonly metricIntervalMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The configuration the environment asks for; undefined when no OTLP endpoint is set (tracing off). */
export function tracingConfig(env: Env): TracingConfig | undefined {
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const tracesUrl = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? (base && signalUrl(base, "traces"));
  const metricsUrl = nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) ?? (base && signalUrl(base, "metrics"));
  if (!tracesUrl && !metricsUrl) return undefined;
  const protocol = nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json")
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: carrierd exports over http/protobuf (the default) or http/json`);
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000);
  return {
    tracesUrl,
    metricsUrl,
    protocol,
    headers: keyValues(env.OTEL_EXPORTER_OTLP_HEADERS),
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? "carrierd",
    resourceAttributes: keyValues(env.OTEL_RESOURCE_ATTRIBUTES),
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
    metricIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value?.trim() ? value.trim() : undefined;
}

/** The base endpoint plus the signal's path, as the specification builds it (`/v1/traces`, `/v1/metrics`). */
function signalUrl(base: string, signal: "traces" | "metrics"): string {
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/** `key=value,key2=value2`, values percent-decoded (the W3C Baggage format both variables use). */
function keyValues(text: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of (text ?? "").split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    const key = item.slice(0, at).trim();
    if (!key) continue;
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      pairs[key] = item.slice(at + 1).trim();
    }
  }
  return pairs;
}
