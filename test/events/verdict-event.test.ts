import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";
import { loadEventValidators, schemaProblems } from "./event-schemas.js";
import { openEvents } from "./ws-client.js";

let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  // Groq refuses reasoning_content on assistant messages; this route (wrongly, on purpose) sends it
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  groq: { plugin: openai-compatible, base_url: "${upstream.baseUrl("groq")}" }
models:
  - { name: "groq/*", provider: groq }
carriers:
  - match: {}
    fields: [reasoning_content, reasoning]
`,
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

test("a real unknown-field rejection reaches subscribers as a valid verdict.recorded, before the retried turn", async () => {
  const client = await openEvents(gateway);
  await client.subscribe({ events: ["verdict.recorded", "turn.started", "turn.completed"] });
  const history: Message[] = [{ role: "user", content: "hello" }];
  const first = await ask(gateway, { model: "groq/qwen3-32b", stream: true, messages: history });
  expect(first.status).toBe(200);
  history.push(first.kept, { role: "user", content: "and then?" });
  const second = await ask(gateway, { model: "groq/qwen3-32b", stream: true, messages: history }, { "x-session-id": first.sessionId! });
  expect(second.status).toBe(200);

  const verdict = await client.waitFor((message) => message.type === "verdict.recorded");
  expect(schemaProblems(loadEventValidators(), verdict)).toEqual([]);
  expect(verdict).toMatchObject({ provider: "groq", host: "127.0.0.1", model: "qwen3-32b", session_id: first.sessionId, retried: true });
  expect(verdict.fields).toContain("reasoning_content");
  // the retried request's turn starts after the verdict, with the rejected fields withheld
  const completed = await client.waitFor((message) => message.type === "turn.completed" && client.messages.indexOf(message) > client.messages.indexOf(verdict));
  const started = client.messages.find((message) => message.type === "turn.started" && message.turn_id === completed.turn_id)!;
  expect(client.messages.indexOf(started)).toBeGreaterThan(client.messages.indexOf(verdict));
  expect(started.fields).toEqual([]);
  client.close();
});
