import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, expect, test } from "vitest";
import { openEvents } from "../events/ws-client.js";
import { addKey } from "../keys/keys-support.js";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * The Gemini door is a door like the others: sessions (X-Session-Id both
 * ways), key scopes and model limits, live events, session history,
 * metrics by the row's path, and the access log.
 */
let gateway: TestGateway;
let log: CapturedLog;

beforeAll(async () => {
  log = captureLog();
  gateway = await startTestGateway({ routes: DEMO_ROUTES, log: log.logger });
});
afterAll(() => gateway?.stop());

const BODY = { contents: [{ role: "user", parts: [{ text: "What is 2+3?" }] }], generationConfig: { thinkingConfig: { includeThoughts: true } } };

function post(verb: string, key: string, body: unknown = BODY, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1beta/models/demo:${verb}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": key, ...headers },
    body: JSON.stringify(body),
  });
}

test("a named session: X-Session-Id continues it, and the answer names it", async () => {
  const first = await post("generateContent", gateway.key, BODY, { "x-session-id": "gemini-door-session" });
  expect(first.status).toBe(200);
  expect(first.headers.get("x-session-id")).toBe("gemini-door-session");
  const stream = await post("streamGenerateContent?alt=sse", gateway.key, BODY, { "x-session-id": "gemini-door-session" });
  expect(stream.headers.get("x-session-id")).toBe("gemini-door-session");
  expect(stream.headers.get("content-type")).toContain("text/event-stream");
  const text = await stream.text();
  expect(text).toContain('"thought":true');
  expect(text).toContain('"finishReason":"STOP"');
  const history = (await (await gateway.fetch("/v1/sessions/gemini-door-session")).json()) as { turns: unknown[] };
  expect(history.turns).toHaveLength(2);
});

test("without ?alt=sse, streamGenerateContent answers one JSON array", async () => {
  const answer = await post("streamGenerateContent", gateway.key);
  expect(answer.status).toBe(200);
  const chunks = (await answer.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
  expect(Array.isArray(chunks)).toBe(true);
  expect(chunks[0]!.candidates[0]!.content.parts.map((part) => part.text).join("")).toContain("5");
});

test("key scopes and model limits: 403 PERMISSION_DENIED without the chat scope, 404 NOT_FOUND for a model outside the key's", async () => {
  const ops = await addKey(gateway, "gemini-ops", { scopes: ["admin"] });
  const refused = await post("generateContent", ops);
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ code: 403, status: "PERMISSION_DENIED" });
  const narrow = await addKey(gateway, "gemini-narrow", { models: ["other-model"] });
  const hidden = await post("countTokens", narrow);
  expect(hidden.status).toBe(404);
  expect(((await hidden.json()) as { error: unknown }).error).toMatchObject({ code: 404, status: "NOT_FOUND" });
  const own = await addKey(gateway, "gemini-cli");
  const client = new GoogleGenAI({ apiKey: own, httpOptions: { baseUrl: gateway.url } });
  expect((await client.models.generateContent({ model: "demo", contents: "What is 2+3?" })).text).toContain("5");
});

test("malformed JSON and a bad X-Session-Id are refused in Google's shape", async () => {
  const badSession = await post("generateContent", gateway.key, BODY, { "x-session-id": "not a session id" });
  expect(badSession.status).toBe(400);
  expect(((await badSession.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  const badJson = await fetch(`${gateway.url}/v1/models/demo:generateContent`, {
    method: "POST",
    headers: { "x-goog-api-key": gateway.key, "content-type": "application/json" },
    body: "{",
  });
  expect(badJson.status).toBe(400);
  expect(((await badJson.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
});

test("events, metrics and the access log see the door's turns", async () => {
  const events = await openEvents(gateway);
  await events.subscribe();
  const answer = await post("streamGenerateContent?alt=sse", gateway.key);
  const session = answer.headers.get("x-session-id");
  await answer.text();
  const completed = await events.waitFor((message) => message.type === "turn.completed" && message.session_id === session);
  expect(completed).toMatchObject({ finish_reason: "stop", usage: { completion_tokens_details: { reasoning_tokens: expect.any(Number) as number } } });
  events.close();
  const metrics = await (await gateway.fetch("/metrics")).text();
  expect(metrics).toContain('route="/v1beta/models/{model}:streamGenerateContent",status="200"');
  const line = log.lines.findLast((entry) => entry.message === "request" && entry.object.path === "/v1beta/models/demo:streamGenerateContent");
  expect(line?.object).toMatchObject({ method: "POST", model: "demo", status: 200, session_id: session });
});
