import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

/** A span as both encodings decode to: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly statusCode: number;
  readonly resource: Record<string, unknown>;
}

/** An OTLP export as it arrived. */
export interface ReceivedExport {
  readonly path: string;
  readonly contentType: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly received: ReceivedExport[];
  spans(): ReceivedSpan[];
  /** Every data point of every metric, by metric name (attributes only, plus the histogram's count and sum). */
  metrics(): Map<string, { attributes: Record<string, unknown>; count?: number; sum?: number }[]>;
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP receiver (https://opentelemetry.io/docs/specs/otlp/#otlphttp):
 * answers `POST /v1/traces` and `/v1/metrics` with an empty success, and
 * decodes what came, JSON or protobuf, by its content type.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedExport[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const contentType = request.headers["content-type"] ?? "";
      received.push({ path: request.url ?? "", contentType, headers: request.headers, body: Buffer.concat(chunks) });
      const json = contentType.includes("json");
      response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      response.end(json ? "{}" : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    spans: () => received.filter((item) => item.path === "/v1/traces").flatMap(decodeSpans),
    metrics: () => {
      const byName = new Map<string, { attributes: Record<string, unknown>; count?: number; sum?: number }[]>();
      for (const item of received.filter((each) => each.path === "/v1/metrics"))
        for (const [name, points] of decodeMetrics(item)) byName.set(name, [...(byName.get(name) ?? []), ...points]);
      return byName;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The subset of opentelemetry-proto (https://github.com/open-telemetry/opentelemetry-proto) these tests read. */
const PROTO = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6; repeated KeyValue attributes = 9; Status status = 15; }
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message HistogramDataPoint { repeated KeyValue attributes = 9; fixed64 count = 4; double sum = 5; }
message Histogram { repeated HistogramDataPoint data_points = 1; }
message Metric { string name = 1; Histogram histogram = 9; }
message ScopeMetrics { repeated Metric metrics = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
`;
const root = protobuf.parse(PROTO, { keepCase: false }).root;
const TRACE_REQUEST = root.lookupType("otlp.ExportTraceServiceRequest");
const METRICS_REQUEST = root.lookupType("otlp.ExportMetricsServiceRequest");

/** An export's body as OTLP/JSON's object (lowerCamelCase fields; ids hex strings): protobuf is decoded into the same shape. */
function asObject(item: ReceivedExport, type: protobuf.Type): Record<string, unknown> {
  if (item.contentType.includes("json")) return JSON.parse(item.body.toString("utf8")) as Record<string, unknown>;
  return type.toObject(type.decode(item.body), { longs: Number, bytes: String, defaults: false }) as Record<string, unknown>;
}

type Json = Record<string, unknown>;

function decodeSpans(item: ReceivedExport): ReceivedSpan[] {
  const body = asObject(item, TRACE_REQUEST);
  const hex = (id: unknown) => (typeof id !== "string" || id === "" ? "" : item.contentType.includes("json") ? id : Buffer.from(id, "base64").toString("hex"));
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of (body.resourceSpans as Json[] | undefined) ?? []) {
    const resource = attributesOf((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scope of (resourceSpans.scopeSpans as Json[] | undefined) ?? [])
      for (const span of (scope.spans as Json[] | undefined) ?? [])
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          statusCode: Number((span.status as Json | undefined)?.code ?? 0),
          resource,
        });
  }
  return spans;
}

function decodeMetrics(item: ReceivedExport): Map<string, { attributes: Record<string, unknown>; count?: number; sum?: number }[]> {
  const body = asObject(item, METRICS_REQUEST);
  const found = new Map<string, { attributes: Record<string, unknown>; count?: number; sum?: number }[]>();
  for (const resourceMetrics of (body.resourceMetrics as Json[] | undefined) ?? [])
    for (const scope of (resourceMetrics.scopeMetrics as Json[] | undefined) ?? [])
      for (const metric of (scope.metrics as Json[] | undefined) ?? []) {
        const points = ((metric.histogram as Json | undefined)?.dataPoints as Json[] | undefined) ?? [];
        found.set(
          String(metric.name),
          points.map((point) => ({ attributes: attributesOf(point.attributes), count: Number(point.count), sum: Number(point.sum) })),
        );
      }
  return found;
}

function attributesOf(list: unknown): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const entry of (list as Json[] | undefined) ?? []) attributes[String(entry.key)] = valueOf(entry.value as Json | undefined);
  return attributes;
}

function valueOf(value: Json | undefined): unknown {
  if (!value) return undefined;
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("arrayValue" in value) return (((value.arrayValue as Json).values as Json[] | undefined) ?? []).map(valueOf);
  return undefined;
}
