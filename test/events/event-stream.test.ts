import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { loadEventValidators, schemaProblems } from "./event-schemas.js";
import { openEvents, type EventClient } from "./ws-client.js";

const validators = loadEventValidators();
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

type Message = Record<string, unknown>;
const ofTurn = (client: EventClient, turnId: unknown) => client.messages.filter((message) => message.turn_id === turnId);

function chat(sessionId: string | undefined, body: Record<string, unknown> = {}) {
  const headers: Record<string, string> = sessionId ? { "x-session-id": sessionId } : {};
  return gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+3?" }], ...body }, headers);
}

function expectValid(messages: Message[]): void {
  expect(messages.flatMap((message) => schemaProblems(validators, message))).toEqual([]);
}

test("a streamed turn's events arrive in order, valid, carrying the response's session id", async () => {
  const client = await openEvents(gateway);
  expectValid([await client.subscribe()]);
  const response = await chat(undefined);
  const sessionId = response.headers.get("x-session-id");
  const { events: chunks } = await readSse(response);
  const completed = await client.waitFor((message) => message.type === "turn.completed" && message.session_id === sessionId);

  const turn = ofTurn(client, completed.turn_id);
  expectValid(turn);
  expect(turn.map((event) => event.seq)).toEqual(turn.map((_, index) => index));
  expect(turn.every((event) => event.session_id === sessionId)).toBe(true);
  const types = turn.map((event) => event.type as string);
  expect(types[0]).toBe("turn.started");
  expect(types.at(-1)).toBe("turn.completed");
  const lastReasoning = types.lastIndexOf("reasoning.delta");
  expect(lastReasoning).toBeGreaterThan(0);
  expect(types.indexOf("content.delta")).toBeGreaterThan(lastReasoning);
  expect(turn[0]).toMatchObject({ model: "demo", provider: "demo", upstream_model: "demo-reasoner", fields: ["reasoning_content"], route: 1 });

  // the bus is the one source: the WebSocket saw exactly what the SSE client saw
  const deltas = chunks.map((chunk) => (chunk as { choices: { delta: Record<string, string> }[] }).choices[0]?.delta ?? {});
  const joined = (type: string) =>
    turn
      .filter((event) => event.type === type)
      .map((event) => event.text)
      .join("");
  expect(joined("reasoning.delta")).toBe(deltas.map((delta) => delta.reasoning_content ?? "").join(""));
  expect(joined("content.delta")).toBe(deltas.map((delta) => delta.content ?? "").join(""));
  expect(joined("content.delta")).toContain("5");
  expect(turn.at(-1)).toMatchObject({ finish_reason: "stop", usage: { completion_tokens_details: { reasoning_tokens: expect.any(Number) } } });
  client.close();
});

test("a tool-call turn publishes tool_call before turn.completed, non-streamed requests too", async () => {
  const client = await openEvents(gateway);
  await client.subscribe();
  const tools = [
    { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } } },
  ];
  // the demo calls a tool only when it fits the question: a look-up for "lookup"
  const response = await chat("tools-session", { stream: false, tools, messages: [{ role: "user", content: "Look up serendipity" }] });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { tool_calls: { id: string }[] } }[] };
  const completed = await client.waitFor((message) => message.type === "turn.completed" && message.session_id === "tools-session");
  const turn = ofTurn(client, completed.turn_id);
  expectValid(turn);
  const types = turn.map((event) => event.type);
  expect(types.indexOf("tool_call")).toBe(types.length - 2);
  const call = turn.find((event) => event.type === "tool_call")!;
  expect(call).toMatchObject({ id: body.choices[0]!.message.tool_calls[0]!.id, name: "lookup" });
  expect(JSON.parse(call.arguments as string)).toHaveProperty("query");
  expect(completed.finish_reason).toBe("tool_calls");
  client.close();
});

test("subscriptions filter by session and by event type", async () => {
  const bySession = await openEvents(gateway);
  expect(await bySession.subscribe({ sessions: ["filter-a"] })).toMatchObject({ sessions: ["filter-a"] });
  const byType = await openEvents(gateway, { auth: "message" });
  expect(await byType.subscribe({ events: ["turn.started", "turn.completed"] })).toMatchObject({ sessions: ["*"], events: ["turn.started", "turn.completed"] });

  // filter-b first: each socket delivers in publish order, so anything of filter-b would precede filter-a's end
  await readSse(await chat("filter-b"));
  await readSse(await chat("filter-a"));
  await bySession.waitFor((message) => message.type === "turn.completed");
  await byType.waitFor((message) => message.type === "turn.completed" && message.session_id === "filter-a");

  const sessionEvents = bySession.messages.filter((message) => message.type !== "subscribed");
  expect(new Set(sessionEvents.map((message) => message.session_id))).toEqual(new Set(["filter-a"]));
  expect(sessionEvents.some((message) => message.type === "reasoning.delta")).toBe(true);
  const typed = byType.messages.filter((message) => message.type !== "subscribed");
  expect(typed.map((message) => `${String(message.session_id)} ${String(message.type)}`)).toEqual([
    "filter-b turn.started",
    "filter-b turn.completed",
    "filter-a turn.started",
    "filter-a turn.completed",
  ]);
  bySession.close();
  byType.close();
});

test("bad messages get an error reply and the connection stays usable", async () => {
  const client = await openEvents(gateway);
  const replies: Message[] = [];
  const next = async (body: unknown) => {
    const before = client.messages.length;
    client.send(body);
    const reply = await client.waitFor((message) => client.messages.indexOf(message) >= before);
    replies.push(reply);
    return reply;
  };
  expect(await next("{not json")).toMatchObject({ type: "error", code: "invalid_message" });
  expect(await next([1, 2])).toMatchObject({ type: "error", code: "invalid_message" });
  expect(await next({ type: "subscribe", events: ["reasoning.delta", "nope"] })).toMatchObject({ type: "error", code: "invalid_subscribe" });
  expect(await next({ type: "subscribe", sessions: ["bad id with spaces"] })).toMatchObject({ type: "error", code: "invalid_subscribe" });
  expect(await next({ type: "subscribe", sessions: "*" })).toMatchObject({ type: "error", code: "invalid_subscribe" });
  expect(await next({ type: "hello" })).toMatchObject({ type: "error", code: "unknown_message" });
  expect(await next({ type: "ping" })).toEqual({ type: "pong" });
  expect(await next({ type: "subscribe", sessions: ["*"], events: ["turn.completed"] })).toMatchObject({ type: "subscribed" });
  expectValid(replies);
  await readSse(await chat("still-usable"));
  await client.waitFor((message) => message.type === "turn.completed" && message.session_id === "still-usable");
  client.close();
});

test("routes.reloaded and routes.rejected follow edits of routes.yaml", async () => {
  const all = await openEvents(gateway);
  await all.subscribe({ events: ["routes.reloaded", "routes.rejected"] });
  const oneSession = await openEvents(gateway);
  await oneSession.subscribe({ sessions: ["some-session"] });

  writeFileSync(gateway.routesPath, `${DEMO_ROUTES}# edited\n`);
  const reloaded = await all.waitFor((message) => message.type === "routes.reloaded");
  writeFileSync(gateway.routesPath, DEMO_ROUTES.replace("fields: [reasoning_content]", "fields: [reasoning_content, thoughts]"));
  const rejected = await all.waitFor((message) => message.type === "routes.rejected");
  expectValid([reloaded, rejected]);
  expect(reloaded).toMatchObject({ file: gateway.routesPath, revision: expect.any(String), previous_revision: expect.any(String) });
  expect(rejected).toMatchObject({ revision_in_force: reloaded.revision });
  expect((rejected.errors as { line: number }[])[0]!.line).toBe(8);

  // session-scoped subscribers do not get gateway-wide events
  await oneSession.subscribe({ sessions: ["some-session"] });
  expect(oneSession.messages.every((message) => message.type === "subscribed")).toBe(true);
  writeFileSync(gateway.routesPath, DEMO_ROUTES);
  await all.waitFor((message) => message.type === "routes.reloaded" && message.revision !== reloaded.revision);
  all.close();
  oneSession.close();
});
