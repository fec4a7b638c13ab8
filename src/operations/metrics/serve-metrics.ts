import type { ServerResponse } from "node:http";
import type { GatewayMetrics } from "./gateway-metrics.js";

/** `GET /metrics` (auth, docs/events.md#get-metrics): the Prometheus text exposition, never cached. */
export async function serveMetrics(metrics: GatewayMetrics, response: ServerResponse): Promise<void> {
  const { contentType, body } = await metrics.render();
  response.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
  response.end(body);
}
