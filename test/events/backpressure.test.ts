import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { EVENT_BUS, EVENT_HUB } from "../../src/foundation/container/tokens.js";
import type { EventBus } from "../../src/foundation/event-bus/event-bus.js";
import type { EventHub } from "../../src/events/event-hub.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { openEvents, until } from "./ws-client.js";

const ROUTES = `${DEMO_ROUTES.replace("models:\n", "models:\n  - { name: verbose, provider: verbose }\n").replace("providers:\n", "providers:\n  verbose: { plugin: verbose }\n")}`;

let gateway: TestGateway;
beforeAll(async () => {
  // a short grace period so the stall is decided within the test; the buffer still holds a whole burst of 50 streams (200 KB)
  gateway = await startTestGateway({
    routes: ROUTES,
    pluginDirs: [join(import.meta.dirname, "fixtures", "verbose-plugin")],
    env: { CARRIERD_EVENTS_BUFFER_BYTES: String(512 * 1024), CARRIERD_EVENTS_STALL_MS: "300" },
  });
});
afterAll(() => gateway.stop());

test("a stalled subscriber is dropped and closed with 1013 while 50 requests stream unaffected", async () => {
  const hub = gateway.container.resolve<EventHub>(EVENT_HUB);
  let published = 0;
  const stopCounting = gateway.container.resolve<EventBus>(EVENT_BUS).subscribe(() => published++);
  const healthy = await openEvents(gateway);
  await healthy.subscribe();
  const stalled = await openEvents(gateway);
  await stalled.subscribe();
  stalled.ws.pause(); // stop reading: the kernel buffers fill, then the server-side queue

  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: 50 }, async (_, index) => {
      const response = await gateway.post("/v1/chat/completions", {
        model: "verbose",
        stream: true,
        messages: [{ role: "user", content: `Request ${index}: think it through.` }],
      });
      const { events, done } = await readSse(response);
      return { status: response.status, done, chunks: events.length };
    }),
  );
  const elapsed = performance.now() - started;
  // every stream finished while the subscriber was still paused: no request waited on it
  expect(results.every((result) => result.status === 200 && result.done && result.chunks > 10)).toBe(true);
  expect(elapsed).toBeLessThan(10_000);

  // the healthy subscriber got every event, in full, while the stalled one was behind
  await healthy.waitFor(() => healthy.messages.filter((message) => message.type === "turn.completed").length === 50);
  stopCounting();
  expect(published).toBe(50 * 63); // turn.started, 60 reasoning deltas, 1 content delta, turn.completed
  expect(healthy.messages.filter((message) => message.type !== "subscribed")).toHaveLength(published);

  await until(() => hub.slowClosed >= 1, 5000);
  expect(hub.droppedEvents).toBeGreaterThan(0);
  stalled.ws.resume();
  const { code } = await stalled.closed;
  expect(code).toBe(1013);
  const last = stalled.messages.at(-1)!;
  expect(last.type).toBe("dropped");
  expect(last.count).toBeGreaterThan(0);
  const received = stalled.messages.filter((message) => message.type !== "subscribed" && message.type !== "dropped").length;
  const dropped = stalled.messages.filter((message) => message.type === "dropped").reduce((sum, message) => sum + Number(message.count), 0);
  expect(received + dropped).toBeLessThanOrEqual(published); // after the 1013 close nothing more is counted for it
  expect(dropped).toBe(hub.droppedEvents);
  console.log(`stalled subscriber: ${received} events received, ${dropped} dropped; 50 requests took ${Math.round(elapsed)} ms`);
  healthy.close();
});
