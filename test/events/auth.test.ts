import { afterAll, beforeAll, expect, test } from "vitest";
import WebSocket from "ws";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { eventsUrl, openEvents, upgradeStatus } from "./ws-client.js";

const UI_ORIGIN = "https://ui.example";
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES, corsOrigins: [UI_ORIGIN] });
});
afterAll(() => gateway.stop());

const streamOne = async (sessionId: string) =>
  readSse(
    await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-session-id": sessionId }),
  );

test("a wrong or malformed Authorization header refuses the upgrade with 401", async () => {
  expect(await upgradeStatus(gateway, { authorization: "Bearer not-the-key" })).toBe(401);
  expect(await upgradeStatus(gateway, { authorization: `Basic ${gateway.key}` })).toBe(401);
  expect(await upgradeStatus(gateway, { authorization: "" })).toBe(401);
  expect(await upgradeStatus(gateway, { authorization: `Bearer ${gateway.key}` })).toBe(101);
});

test("a wrong key in the auth message closes with 4401 and nothing is received", async () => {
  const client = await openEvents(gateway, { auth: "none" });
  await streamOne("while-unauthenticated"); // events flow while the peer is not yet authenticated
  client.send({ type: "auth", key: "wrong" });
  const { code } = await client.closed;
  expect(code).toBe(4401);
  expect(client.messages).toEqual([]);
});

test("a first message that is not auth closes with 4401", async () => {
  for (const first of [JSON.stringify({ type: "subscribe", sessions: ["*"] }), "not json", Buffer.from([1, 2, 3])]) {
    const client = await openEvents(gateway, { auth: "none" });
    client.ws.send(first);
    expect((await client.closed).code).toBe(4401);
    expect(client.messages).toEqual([]);
  }
});

test("no auth message within the auth time (5 s unless CARRIERD_EVENTS_AUTH_MS) closes with 4401, with nothing received meanwhile", async () => {
  const quick = await startTestGateway({ routes: DEMO_ROUTES, env: { CARRIERD_EVENTS_AUTH_MS: "300" } });
  try {
    const started = performance.now();
    const client = await openEvents(quick, { auth: "none" });
    const sent = await readSse(await quick.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(sent.done).toBe(true); // events flowed while the peer had not authenticated
    const { code } = await client.closed;
    expect(code).toBe(4401);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(client.messages).toEqual([]);
  } finally {
    await quick.stop();
  }
});

test("the right key in the auth message opens the stream", async () => {
  const client = await openEvents(gateway, { auth: "message" });
  await client.subscribe({ sessions: ["by-message"] });
  await streamOne("by-message");
  const completed = await client.waitFor((message) => message.type === "turn.completed");
  expect(completed).toMatchObject({ type: "turn.completed", session_id: "by-message" });
  expect(client.messages.map((message) => message.type)).toContain("reasoning.delta");
  client.close();
});

test("browser origins: same origin and the CORS allowlist pass, others get 403", async () => {
  const key = `Bearer ${gateway.key}`;
  expect(await upgradeStatus(gateway, { origin: gateway.url, authorization: key })).toBe(101);
  expect(await upgradeStatus(gateway, { origin: UI_ORIGIN, authorization: key })).toBe(101);
  expect(await upgradeStatus(gateway, { origin: "https://evil.example", authorization: key })).toBe(403);
  expect(await upgradeStatus(gateway, { origin: "https://evil.example" })).toBe(403);
  expect(await upgradeStatus(gateway, { origin: "null" })).toBe(403);
});

test("upgrades anywhere but /v1/events are refused with 404", async () => {
  const status = await new Promise<number>((resolve) => {
    const ws = new WebSocket(eventsUrl(gateway).replace("/v1/events", "/v1/chat/completions"), { headers: { authorization: `Bearer ${gateway.key}` } });
    ws.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
    ws.on("error", () => undefined);
  });
  expect(status).toBe(404);
});

test("a plain GET /v1/events (no upgrade) gets 426", async () => {
  const response = await gateway.fetch("/v1/events");
  expect(response.status).toBe(426);
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe("upgrade_required");
});
