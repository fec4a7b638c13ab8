import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { addKey } from "../keys/keys-support.js";
import { familyRoutes } from "../support/family-routes.js";
import { afterGatewayCommits, DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream } from "../support/openai-upstream.js";

/**
 * An agent's own session id names its session when the request sends no
 * X-Session-Id (docs/api.md#sessions-x-session-id): Claude Code's
 * `x-claude-code-session-id`, Codex's `session-id`, under the key's scope as
 * X-Session-Id is. Its turns are found in that session, and the session list
 * shows them under that id. Header names as the clients send them
 * (test/fixtures/clients: claude-code-2.1.337-unrecognized-model-system-role-req.json,
 * codex-0.171.0-default-responses-req.json).
 */

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(async () => {
  await gateway?.stop();
});

async function post(path: string, body: unknown, headers: Record<string, string>, key = gateway.key): Promise<Response> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01", ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  await response.text();
  return response;
}

const messages = (text: string) => ({ model: "demo", max_tokens: 256, messages: [{ role: "user", content: text }] });

async function turnsOf(name: string, key = gateway.key): Promise<number> {
  await afterGatewayCommits(gateway);
  const response = await fetch(`${gateway.url}/v1/sessions/${name}`, { headers: { authorization: `Bearer ${key}` } });
  if (response.status === 404) return 0;
  return ((await response.json()) as { turns: unknown[] }).turns.length;
}

test("Claude Code's x-claude-code-session-id names the session of each of its turns on the Messages door", async () => {
  const id = randomUUID();
  const first = await post("/v1/messages", messages("What is 2+2?"), { "x-claude-code-session-id": id });
  expect(first.headers.get("x-session-id")).toBe(id);
  // a request whose history has nothing in common with the first still lands in the session its agent named
  const second = await post("/v1/messages", messages("What is 3+3?"), { "x-claude-code-session-id": id });
  expect(second.headers.get("x-session-id")).toBe(id);
  expect(await turnsOf(id)).toBe(2);
  const listed = (await (await fetch(`${gateway.url}/v1/sessions`, { headers: { authorization: `Bearer ${gateway.key}` } })).json()) as {
    data: { id: string }[];
  };
  expect(listed.data.map((session) => session.id)).toContain(id);
});

test("Codex's session-id header names the session on the Responses door, and on chat completions", async () => {
  const id = randomUUID();
  const answered = await post("/v1/responses", { model: "demo", store: false, stream: true, input: "What is 2+2?" }, { "session-id": id });
  expect(answered.headers.get("x-session-id")).toBe(id);
  const chat = await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "hi" }] }, { "session-id": id });
  expect(chat.headers.get("x-session-id")).toBe(id);
  expect(await turnsOf(id)).toBe(2);
});

test("X-Session-Id, when sent, wins over an agent's id; an agent id carrierd cannot keep is left unread, never refused", async () => {
  const named = await post("/v1/messages", messages("hi"), { "x-session-id": "mine", "x-claude-code-session-id": randomUUID() });
  expect(named.headers.get("x-session-id")).toBe("mine");
  const odd = await post("/v1/messages", messages("hi"), { "x-claude-code-session-id": "not/a name" });
  expect(odd.headers.get("x-session-id")).toMatch(/^sess_/);
});

test("an agent's session id is the key's: the same id under another key is another session", async () => {
  const id = randomUUID();
  const other = await addKey(gateway, "second-agent");
  await post("/v1/messages", messages("hi"), { "x-claude-code-session-id": id });
  await post("/v1/messages", messages("hi"), { "x-claude-code-session-id": id }, other);
  expect(await turnsOf(id)).toBe(1);
  expect(await turnsOf(id, other)).toBe(1);
});

test("x-claude-code-context-compacted: the session's earlier turns are no longer placed by position", async () => {
  const upstream = await startOpenAIUpstream();
  const glm = await startTestGateway({ routes: familyRoutes(upstream) });
  try {
    const id = randomUUID();
    const ask = async (history: unknown[], headers: Record<string, string>) => {
      const response = await fetch(`${glm.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": glm.key, "x-claude-code-session-id": id, ...headers },
        body: JSON.stringify({ model: "zai/glm-4.6", max_tokens: 256, messages: history }),
      });
      expect(response.status).toBe(200);
      await response.json();
      const sent = upstream.requestsFor("zai").at(-1)!.body.messages;
      return sent.filter((message) => message.role === "assistant").map((message) => message.reasoning_content ?? null);
    };
    await ask([{ role: "user", content: "question 1" }], {});
    const first = upstream.requestsFor("zai").length;
    expect(first).toBe(1);
    // the answer re-rendered (no fingerprint finds it): the session's first turn by position, its reasoning back
    const history = [
      { role: "user", content: "question 1" },
      { role: "assistant", content: "a summary of what came before" },
      { role: "user", content: "question 2" },
    ];
    const [placed] = await ask(history, {});
    expect(placed).toBe('Step 1: the zai model thinks about "question 1".');
    // compacted: the same message is the client's summary, not the session's first turn
    const [compacted] = await ask(history, { "x-claude-code-context-compacted": "true" });
    expect(compacted).toBeNull();
  } finally {
    await glm.stop();
    await upstream.close();
  }
});
