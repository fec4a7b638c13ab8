import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { openEvents } from "./ws-client.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES, env: { CARRIERD_EVENTS_PING_MS: "150" } });
});
afterAll(() => gateway.stop());

test("a peer that stops answering pings is terminated; one that answers stays", async () => {
  const silent = await openEvents(gateway, { autoPong: false });
  await silent.subscribe();
  const healthy = await openEvents(gateway);
  await healthy.subscribe();
  let pings = 0;
  silent.ws.on("ping", () => pings++);

  const started = performance.now();
  const { code } = await silent.closed;
  expect(code).toBe(1006); // terminated, no closing handshake: the peer is presumed gone
  expect(pings).toBeGreaterThanOrEqual(1);
  expect(performance.now() - started).toBeLessThan(2000);

  expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
  await readSse(
    await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-session-id": "still-alive" }),
  );
  await healthy.waitFor((message) => message.type === "turn.completed" && message.session_id === "still-alive");
  healthy.close();
});
