import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { afterGatewayCommits, DEMO_ROUTES, readSse, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { openEvents } from "../events/ws-client.js";
import { addKey, bearer } from "./keys-support.js";

/** Each key sees only its own: responses, conversations, fingerprints, events; the owner key sees everything. */
const ROUTES = DEMO_ROUTES.replace(
  "  - { name: demo, provider: demo, model: demo-reasoner }",
  "  - { name: demo, provider: demo, model: demo-reasoner }\n  - { name: other, provider: demo, model: demo-reasoner }",
);

let gateway: TestGateway;
let a: string;
let b: string;
let admin: string;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: ROUTES });
  a = await addKey(gateway, "frontend-a");
  b = await addKey(gateway, "frontend-b");
  admin = await addKey(gateway, "ops", { scopes: ["admin"] });
});
afterAll(() => gateway?.stop());

const as = (secret: string, path: string, init: RequestInit = {}) =>
  fetch(`${gateway.url}${path}`, {
    ...init,
    headers: { ...bearer(secret), "content-type": "application/json", ...(init.headers as Record<string, string> | undefined) },
  });
const post = (secret: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  as(secret, path, { method: "POST", body: JSON.stringify(body), headers });
const codeOf = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code;

describe("responses and conversations", () => {
  test("key B gets a 404 for key A's response id on every route that takes one; A and the owner key do not", async () => {
    const created = await post(a, "/v1/responses", { model: "demo", input: "hello from A" });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    expect((await as(b, `/v1/responses/${id}`)).status).toBe(404);
    expect((await as(b, `/v1/responses/${id}/input_items`)).status).toBe(404);
    expect((await as(b, `/v1/responses/${id}/cancel`, { method: "POST" })).status).toBe(404);
    expect((await as(b, `/v1/responses/${id}`, { method: "DELETE" })).status).toBe(404);
    const continued = await post(b, "/v1/responses", { model: "demo", input: "and B", previous_response_id: id });
    expect(continued.status).toBe(404);
    expect(await codeOf(continued)).toBe("not_found");
    expect((await post(b, "/v1/responses/compact", { model: "demo", previous_response_id: id })).status).toBe(404);
    // still A's, untouched by B's DELETE
    expect((await as(a, `/v1/responses/${id}`)).status).toBe(200);
    expect((await as(gateway.key, `/v1/responses/${id}`)).status).toBe(200);
    expect((await post(a, "/v1/responses", { model: "demo", input: "A again", previous_response_id: id })).status).toBe(200);
  });

  test("key B's conversation of key A's name is B's own, new (as for a name no one used); A's goes on untouched", async () => {
    expect((await post(a, "/v1/responses", { model: "demo", input: "first", conversation: "conv-shared-name" })).status).toBe(200);
    const byB = await post(b, "/v1/responses", { model: "demo", input: "second", conversation: "conv-shared-name" });
    expect(byB.status).toBe(200);
    const ofB = (await byB.json()) as { id: string; conversation: { id: string } };
    expect(ofB.conversation).toEqual({ id: "conv-shared-name" });
    // B's response continued nothing: its input items are its own input alone
    expect(((await (await as(b, `/v1/responses/${ofB.id}/input_items`)).json()) as { data: unknown[] }).data).toHaveLength(1);
    const byA = await post(a, "/v1/responses", { model: "demo", input: "second", conversation: "conv-shared-name" });
    expect(byA.status).toBe(200);
    const body = (await byA.json()) as { id: string };
    const items = (await (await as(a, `/v1/responses/${body.id}/input_items`)).json()) as { data: unknown[] };
    expect(items.data.length).toBeGreaterThan(0);
  });

  test("session ownership regression: key B's X-Session-Id of key A's session never lands in A's session", async () => {
    const first = await post(a, "/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "owned?" }] }, { "x-session-id": "owned-name" });
    expect(first.headers.get("x-session-id")).toBe("owned-name");
    const intruder = await post(b, "/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "mine?" }] }, { "x-session-id": "owned-name" });
    // answered as for a name that exists nowhere: 200, the name it sent
    expect([intruder.status, intruder.headers.get("x-session-id")]).toEqual([200, "owned-name"]);
    await afterGatewayCommits(gateway);
    const scopeOfA = (await storageOf(gateway).keys.list()).keys!.find((key) => key.name === "frontend-a")!.dataScope;
    const ofA = await storageOf(gateway).sessions.show(`owned-name~${scopeOfA}`);
    expect(ofA?.turns).toBe(1);
  });
});

describe("fingerprints", () => {
  test("a history key A's turn produced is a new session for key B, and A's own session for A", async () => {
    const first = await post(a, "/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "fingerprint me" }] });
    expect(first.status).toBe(200);
    const sessionOfA = first.headers.get("x-session-id")!;
    const answer = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const history = {
      model: "demo",
      messages: [
        { role: "user", content: "fingerprint me" },
        { role: "assistant", content: answer },
        { role: "user", content: "go on" },
      ],
    };
    const again = await post(a, "/v1/chat/completions", history);
    expect(again.headers.get("x-session-id")).toBe(sessionOfA);
    const fromB = await post(b, "/v1/chat/completions", history);
    expect(fromB.status).toBe(200);
    expect(fromB.headers.get("x-session-id")).not.toBe(sessionOfA);
    // nor the owner key: its scope is its own, as before access keys existed
    const fromOwner = await post(gateway.key, "/v1/chat/completions", history);
    expect(fromOwner.headers.get("x-session-id")).not.toBe(sessionOfA);
  });
});

describe("models", () => {
  test("a key confined by --models sees only those in /v1/models; others are a 404 as if absent", async () => {
    const confined = await addKey(gateway, "demo-only", { models: ["dem*"] });
    const listed = (await (await as(confined, "/v1/models")).json()) as { data: { id: string }[] };
    expect(listed.data.map((model) => model.id)).toEqual(["demo"]);
    const everyone = (await (await as(a, "/v1/models")).json()) as { data: { id: string }[] };
    expect(everyone.data.map((model) => model.id).sort()).toEqual(["demo", "other"]);
    const refused = await post(confined, "/v1/chat/completions", { model: "other", messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(404);
    const absent = await post(confined, "/v1/chat/completions", { model: "no-such-model", messages: [{ role: "user", content: "hi" }] });
    // word for word the answer for a model that does not exist, so a key learns nothing of the others
    expect((await refused.text()).replace("'other'", "'no-such-model'")).toBe(await absent.text());
    expect((await post(confined, "/v1/responses", { model: "other", input: "hi" })).status).toBe(404);
    expect((await post(confined, "/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
  });
});

describe("events", () => {
  test("an events key sees the turns of the keys it is granted, never others'; by default its own; the owner key sees all", async () => {
    const wall = await addKey(gateway, "wall-of-a", { scopes: ["events"], eventsOf: ["frontend-a"] });
    const lonely = await addKey(gateway, "wall-of-nobody", { scopes: ["events"] });
    const ofA = await openEvents(gateway, { key: wall });
    const ofNobody = await openEvents(gateway, { key: lonely, auth: "message" });
    const owner = await openEvents(gateway);
    for (const client of [ofA, ofNobody, owner]) await client.subscribe({ sessions: ["*"] });
    const streamed = async (secret: string, session: string) => {
      const response = await post(
        secret,
        "/v1/chat/completions",
        { model: "demo", stream: true, messages: [{ role: "user", content: `events ${session}` }] },
        { "x-session-id": session },
      );
      expect((await readSse(response)).done).toBe(true);
    };
    await streamed(a, "sess-events-a");
    await streamed(b, "sess-events-b");
    await owner.waitFor((message) => message.type === "turn.completed" && message.session_id === "sess-events-b");
    await ofA.waitFor((message) => message.type === "turn.completed" && message.session_id === "sess-events-a");
    // a ping answered after the fan-out: whatever the hub sent these two before, they have it
    for (const client of [ofA, ofNobody]) {
      client.send({ type: "ping" });
      await client.waitFor((message) => message.type === "pong");
    }
    const sessions = (client: typeof ofA) =>
      new Set(client.messages.filter((message) => typeof message.session_id === "string").map((message) => message.session_id));
    expect(sessions(ofA)).toEqual(new Set(["sess-events-a"]));
    expect(sessions(ofNobody)).toEqual(new Set());
    expect(sessions(owner)).toEqual(new Set(["sess-events-a", "sess-events-b"]));
    // the key an event belongs to is never written into it
    for (const message of owner.messages) expect(JSON.stringify(message)).not.toMatch(/frontend-a|frontend-b/);
    for (const client of [ofA, ofNobody, owner]) client.close();
  });
});

describe("metrics", () => {
  test("/metrics labels requests and tokens by the key's name, never its secret", async () => {
    await post(b, "/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "count me" }] });
    const response = await as(admin, "/metrics");
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/carrierd_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200",key="frontend-b"\} \d+/);
    expect(text).toMatch(/carrierd_tokens_total\{key="frontend-b",kind="completion"\} [1-9]/);
    expect(text).toMatch(/carrierd_tokens_total\{key="frontend-a",kind="prompt"\} [1-9]/);
    for (const secret of [a, b, admin]) expect(text).not.toContain(secret);
  });
});
