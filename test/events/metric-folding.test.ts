import "reflect-metadata";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, expect, test } from "vitest";
import { EventBus, withKey } from "../../src/foundation/event-bus/event-bus.js";
import type { EventHub } from "../../src/events/event-hub.js";
import type { KeyRing } from "../../src/http/keys/key-ring.js";
import { GatewayMetrics } from "../../src/operations/metrics/gateway-metrics.js";

/**
 * Observations are folded into the metrics in batches
 * (docs/performance.md#the-requests-edges): a read sees every observation made before
 * it, whether a batch was folded meanwhile or not.
 */
const hub: Pick<EventHub, "subscriberCount" | "droppedEvents" | "slowClosed"> = { subscriberCount: 0, droppedEvents: 0, slowClosed: 0 };
const keys: Pick<KeyRing, "lookups" | "nameOf"> = {
  lookups: { found: 0, unknown: 0, remembered: 0, unread: 0, failed: 0 },
  nameOf: () => "client",
};
let metrics: GatewayMetrics | undefined;
afterEach(() => metrics?.close());

function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** One request's worth: its turn's events and its record, as the gateway makes them. */
function request(bus: EventBus, gateway: GatewayMetrics, index: number): void {
  const turnId = `turn_${index}`;
  bus.publish(withKey({ type: "turn.started", turn_id: turnId, provider: "demo", upstream_ms: 2 }, "scope"));
  bus.publish(withKey({ type: "reasoning.delta", turn_id: turnId, text: "…" }, "scope"));
  bus.publish(withKey({ type: "turn.completed", turn_id: turnId, usage: { prompt_tokens: 3, completion_tokens: 2 } }, "scope"));
  gateway.recordRequest({ method: "POST", route: "/v1/chat/completions", status: 200, key: "client" });
}

test.each([1, 7, 100, 1000])("after %i requests every one is counted, folded in batches or not", async (count) => {
  const bus = new EventBus();
  // the constructor's parameters are what the container hands it; a test gives only what metrics read
  metrics = new GatewayMetrics(bus, hub as EventHub, keys as KeyRing);
  for (let index = 0; index < count; index++) {
    request(bus, metrics, index);
    if (index % 10 === 0) await nextTurn();
  }
  const { body } = await metrics.render();
  expect(sample(body, 'carrierd_http_requests_total{method="POST",route="/v1/chat/completions",status="200",key="client"}')).toBe(count);
  expect(sample(body, 'carrierd_tokens_total{key="client",kind="prompt"}')).toBe(3 * count);
  expect(sample(body, 'carrierd_tokens_total{key="client",kind="completion"}')).toBe(2 * count);
  expect(sample(body, 'carrierd_upstream_latency_seconds_count{provider="demo"}')).toBe(count);
  expect(sample(body, 'carrierd_upstream_latency_seconds_sum{provider="demo"}')).toBeCloseTo(0.002 * count, 9);
  expect(sample(body, 'carrierd_time_to_first_reasoning_token_seconds_count{provider="demo"}')).toBe(count);
  expect(sample(body, 'carrierd_turn_duration_seconds_count{provider="demo",outcome="completed"}')).toBe(count);
});
