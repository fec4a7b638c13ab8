import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { METRICS } from "../container/tokens.js";
import type { GatewayMetrics } from "./gateway-metrics.js";

/** `GET /metrics` (auth, SPEC §11) and the request counter hook. Returns what undoes it. */
export function attachMetrics(container: DependencyContainer, server: HttpServer): () => void {
  const metrics = container.resolve<GatewayMetrics>(METRICS);
  const stopCounting = server.onResponse((record) => metrics.recordRequest(record));
  server.addRoute({
    method: "GET",
    path: "/metrics",
    auth: true,
    async handler(_request, response) {
      const { contentType, body } = await metrics.render();
      response.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
      response.end(body);
    },
  });
  return () => {
    stopCounting();
    metrics.close();
  };
}
