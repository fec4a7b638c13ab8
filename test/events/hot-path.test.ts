import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import { EventBus, type GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import type { EventHub } from "../../src/events/event-hub.js";
import { GatewayMetrics } from "../../src/operations/metrics/gateway-metrics.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { openEvents, until } from "./ws-client.js";

const fakeHub = { subscriberCount: 0, droppedEvents: 0, slowClosed: 0 } as unknown as EventHub;

test("typed listeners get only their types, and make only those types wanted", () => {
  const bus = new EventBus();
  const seen: string[] = [];
  const stop = bus.subscribe((event) => seen.push(event.type), ["turn.started"]);
  expect(bus.wants("turn.started")).toBe(true);
  expect(bus.wants("reasoning.delta")).toBe(false);
  bus.publish({ type: "reasoning.delta", text: "x" });
  bus.publish({ type: "turn.started" });
  expect(seen).toEqual(["turn.started"]);
  stop();
  expect(bus.wants("turn.started")).toBe(false);
  expect(bus.listenerCount).toBe(0);
});

test("metrics want each turn's first reasoning delta only, and never content deltas", async () => {
  const bus = new EventBus();
  const metrics = new GatewayMetrics(bus, fakeHub);
  const turn = (type: GatewayEvent["type"], turnId: string, extra: Record<string, unknown> = {}) =>
    bus.publish({ type, session_id: "s", turn_id: turnId, seq: 0, provider: "demo", ...extra });
  expect(bus.wants("reasoning.delta")).toBe(true); // a turn's first
  expect(bus.wants("reasoning.delta", true)).toBe(false); // its later ones
  expect(bus.wants("content.delta")).toBe(false);
  const everything = bus.subscribe(() => undefined); // a WebSocket subscriber wants every delta
  expect(bus.wants("reasoning.delta", true)).toBe(true);
  everything();
  turn("turn.started", "a", { upstream_ms: 3 });
  turn("turn.started", "b");
  turn("reasoning.delta", "a", { text: "x" });
  turn("reasoning.delta", "a", { text: "y" }); // seen when someone else wants it: not counted twice
  turn("turn.completed", "a", { usage: null, finish_reason: "stop" });
  turn("turn.completed", "b", { usage: null, finish_reason: "stop" });
  const firstReasoning = await metrics.registry.getSingleMetric("carrierd_time_to_first_reasoning_token_seconds")!.get();
  expect(firstReasoning.values.find((value) => value.metricName?.endsWith("_count"))?.value).toBe(1);
  metrics.close();
  expect(bus.listenerCount).toBe(0);
});

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

test("the hub listens to the bus only while someone is subscribed", async () => {
  const bus = gateway.container.resolve<EventBus>(EVENT_BUS);
  expect(bus.wants("content.delta")).toBe(false);
  const client = await openEvents(gateway);
  await client.subscribe();
  expect(bus.wants("content.delta")).toBe(true);
  client.close();
  await until(() => !bus.wants("content.delta"));
});

test("with only first-of-turn listeners, a turn publishes its first reasoning delta and no later one", async () => {
  const bus = gateway.container.resolve<EventBus>(EVENT_BUS);
  const deltas: GatewayEvent[] = [];
  const stop = bus.subscribe((event) => deltas.push(event), ["reasoning.delta"], { firstOfTurn: true });
  const response = await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+2?" }] });
  const { events } = await readSse(response);
  stop();
  const streamed = events.filter((event) => (event as { choices?: { delta?: { reasoning_content?: string } }[] }).choices?.[0]?.delta?.reasoning_content);
  expect(streamed.length).toBeGreaterThan(1);
  expect(deltas).toHaveLength(1);
});
