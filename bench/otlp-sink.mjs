// A loopback OTLP/HTTP receiver for benchmarks: answers every export with an empty success and counts what came.
import { createServer } from "node:http";

/** Starts the sink; `env` is what a gateway exporting to it is started with. */
export async function startOtlpSink() {
  const counts = { traces: 0, metrics: 0, bytes: 0 };
  const server = createServer((request, response) => {
    request.on("data", (chunk) => (counts.bytes += chunk.length));
    request.on("end", () => {
      if (request.url === "/v1/traces") counts.traces++;
      else if (request.url === "/v1/metrics") counts.metrics++;
      response.writeHead(200, { "content-type": "application/x-protobuf" });
      response.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    // a queue and batches large enough that no span of the measured load is dropped
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_BSP_MAX_QUEUE_SIZE: "100000",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048",
      OTEL_BSP_SCHEDULE_DELAY: "1000",
      OTEL_METRIC_EXPORT_INTERVAL: "5000",
    },
    counts: () => ({ ...counts }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
