import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, expect, test } from "vitest";
import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import type { EventBus } from "../../src/foundation/event-bus/event-bus.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { openEvents, until } from "./ws-client.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

/** The value of one sample line, e.g. `carrierd_route_reloads_total{result="reloaded"}`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

test("GET /metrics needs the key", async () => {
  const response = await fetch(`${gateway.url}/metrics`);
  expect(response.status).toBe(401);
});

test("/metrics exposes requests, upstream latency, first reasoning token, retries, verdicts, reloads and subscribers", async () => {
  const subscriber = await openEvents(gateway);
  await subscriber.subscribe({ events: ["routes.reloaded", "routes.rejected"] });
  await readSse(await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+3?" }] }));
  expect((await gateway.post("/v1/chat/completions", { model: "nope", messages: [{ role: "user", content: "x" }] })).status).toBe(404);
  writeFileSync(gateway.routesPath, `${DEMO_ROUTES}# edited\n`);
  await subscriber.waitFor((message) => message.type === "routes.reloaded");
  writeFileSync(gateway.routesPath, "version: [");
  await subscriber.waitFor((message) => message.type === "routes.rejected");
  // the unknown-field fallback publishes this after recording a verdict and before its one retry
  gateway.container.resolve<EventBus>(EVENT_BUS).publish({
    type: "verdict.recorded",
    provider: "demo",
    host: "demo.local",
    model: "demo-reasoner",
    field: "reasoning",
    fields: ["reasoning"],
    retried: true,
  });

  const response = await gateway.fetch("/metrics");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  expect(sample(text, 'carrierd_http_requests_total{method="POST",route="/v1/chat/completions",status="200",key="owner"}')).toBe(1);
  expect(sample(text, 'carrierd_http_requests_total{method="POST",route="/v1/chat/completions",status="404",key="owner"}')).toBe(1);
  expect(sample(text, 'carrierd_http_requests_total{method="GET",route="/metrics",status="401",key=""}')).toBe(1);
  expect(sample(text, 'carrierd_upstream_latency_seconds_count{provider="demo"}')).toBe(1);
  expect(sample(text, 'carrierd_time_to_first_reasoning_token_seconds_count{provider="demo"}')).toBe(1);
  expect(sample(text, 'carrierd_turn_duration_seconds_count{provider="demo",outcome="completed"}')).toBe(1);
  expect(sample(text, 'carrierd_upstream_retries_total{provider="demo"}')).toBe(1);
  expect(sample(text, 'carrierd_verdicts_recorded_total{provider="demo",field="reasoning"}')).toBe(1);
  expect(sample(text, 'carrierd_route_reloads_total{result="reloaded"}')).toBe(1);
  expect(sample(text, 'carrierd_route_reloads_total{result="rejected"}')).toBe(1);
  expect(sample(text, "carrierd_websocket_subscribers")).toBe(1);
  expect(sample(text, "carrierd_websocket_dropped_events_total")).toBe(0);
  expect(sample(text, "carrierd_websocket_slow_closes_total")).toBe(0);
  expect(text).toMatch(/^process_resident_memory_bytes \d+/m);

  subscriber.close();
  await subscriber.closed;
  let after = "";
  await until(async () => sample((after = await (await gateway.fetch("/metrics")).text()), "carrierd_websocket_subscribers") === 0);
  expect(sample(after, 'carrierd_http_requests_total{method="GET",route="/metrics",status="200",key="owner"}')).toBeGreaterThanOrEqual(1);
});
