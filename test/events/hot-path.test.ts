import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { EVENT_BUS } from "../../src/container/tokens.js";
import { EventBus, type GatewayEvent } from "../../src/events/event-bus.js";
import type { EventHub } from "../../src/events/event-hub.js";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";
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

test("metrics want reasoning deltas only until each open turn's first one, and never content deltas", () => {
  const bus = new EventBus();
  const metrics = new GatewayMetrics(bus, fakeHub);
  const turn = (type: GatewayEvent["type"], turnId: string, extra: Record<string, unknown> = {}) => bus.publish({ type, session_id: "s", turn_id: turnId, seq: 0, provider: "demo", ...extra });
  expect(bus.wants("reasoning.delta")).toBe(false);
  turn("turn.started", "a", { upstream_ms: 3 });
  turn("turn.started", "b");
  expect(bus.wants("reasoning.delta")).toBe(true);
  expect(bus.wants("content.delta")).toBe(false);
  turn("reasoning.delta", "a", { text: "x" });
  expect(bus.wants("reasoning.delta")).toBe(true); // b still awaits its first token
  turn("turn.completed", "b", { usage: null, finish_reason: "stop" });
  expect(bus.wants("reasoning.delta")).toBe(false);
  turn("reasoning.delta", "a", { text: "y" });
  turn("turn.completed", "a", { usage: null, finish_reason: "stop" });
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
