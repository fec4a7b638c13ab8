import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

// The per-request debug line "carriers attached", as the daemon writes it (JSON on piped stdout at level debug):
// how many assistant messages matched, and by which key; field names only, never contents.

const KEY = "k-match-counts-0123456789";
const home = mkdtempSync(join(tmpdir(), "carrierd-match-log-"));
let upstream: OpenAIUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  // DeepSeek's own id shape (call_00_ + 24), long and random enough for the ids-and-names key
  upstream = await startOpenAIUpstream({ callId: () => `call_00_${randomBytes(18).toString("base64").replace(/[+/]/g, "x")}` });
  const routes = join(home, "routes.yaml");
  writeFileSync(
    routes,
    `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${upstream.baseUrl("deepseek")}" }
models:
  - { name: "deepseek/*", provider: deepseek }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
`,
  );
  gateway = await startGatewayProcess(
    ["--port", "0"],
    cleanEnv({ CARRIERD_HOME: home, CARRIERD_ROUTES: routes, CARRIERD_API_KEY: KEY, CARRIERD_LOG_LEVEL: "debug" }),
  );
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  rmSync(home, { recursive: true, force: true });
});

type Message = Record<string, unknown>;

async function chat(messages: Message[], headers: Record<string, string> = {}): Promise<{ message: Message; sessionId: string }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "deepseek/chat", tools: [WEATHER_TOOL], messages }),
  });
  const body = (await response.json()) as { choices: { message: Message }[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return { message: body.choices[0]!.message, sessionId: response.headers.get("x-session-id")! };
}

/** The "carriers attached" records the daemon wrote for `sessionId`, in order, once there are `count` of them (its log is written off the request's path). */
async function attachedLines(sessionId: string, count: number): Promise<Record<string, unknown>[]> {
  await gateway.waitFor(new RegExp(`(?:"session_id":"${sessionId}"[^\\n]*"msg":"carriers attached"[\\s\\S]*?){${count}}`));
  return gateway
    .stdout()
    .split("\n")
    .filter((line) => line.includes('"carriers attached"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.session_id === sessionId);
}

test("matched counts by key: fingerprint, ids and names, position, elsewhere", async () => {
  const user = { role: "user", content: "Weather in Turin?" };
  const first = await chat([user]);
  const { reasoning_content: reasoning1, ...toolTurn } = first.message;
  const id = (toolTurn.tool_calls as { id: string }[])[0]!.id;
  // as the AI SDK resends it: arguments reshaped by the tool's schema, so only the ids and names still match
  const reshaped = {
    ...toolTurn,
    content: null,
    tool_calls: [{ id, type: "function", function: { name: "weather", arguments: '{"city":"Turin","unit":"celsius"}' } }],
  };
  const second = await chat([user, reshaped, { role: "tool", tool_call_id: id, content: "18 C" }]);
  expect(second.sessionId).toBe(first.sessionId);
  const { reasoning_content: reasoning2, ...answer } = second.message;
  const history = [
    user,
    reshaped,
    { role: "tool", tool_call_id: id, content: "18 C" },
    answer,
    { role: "user", content: "And Milan?" },
    { role: "assistant", content: "Never stored here." },
    { role: "user", content: "ok" },
  ];
  const third = await chat(history);
  expect(third.sessionId).toBe(first.sessionId);

  const lines = await attachedLines(first.sessionId, 3);
  expect(lines).toHaveLength(3);
  expect(lines.map((line) => line.matched)).toEqual([
    { assistant: 0, fingerprint: 0, ids: 0, position: 0, elsewhere: 0 },
    { assistant: 1, fingerprint: 0, ids: 1, position: 0, elsewhere: 0 },
    { assistant: 3, fingerprint: 1, ids: 1, position: 0, elsewhere: 0 },
  ]);
  expect(lines[2]).toMatchObject({ level: 20, provider: "deepseek", model: "chat", route: 1, effective: ["reasoning_content"] });
  expect((lines[2]!.attached as { index: number; fields: string[] }[]).map(({ index, fields }) => ({ index, fields }))).toEqual([
    { index: 1, fields: ["reasoning_content"] },
    { index: 3, fields: ["reasoning_content"] },
  ]);
  // names only: the reasoning itself is never logged
  expect(gateway.stdout()).not.toContain(String(reasoning1));
  expect(gateway.stdout()).not.toContain(String(reasoning2));

  // explicit sessions: a re-rendered text is placed by its position; a turn of another session is found there
  const explicit = await chat(
    [
      user,
      reshaped,
      { role: "tool", tool_call_id: id, content: "18 C" },
      { role: "assistant", content: `**${String(answer.content)}**` },
      { role: "user", content: "again" },
    ],
    { "x-session-id": first.sessionId },
  );
  expect(explicit.sessionId).toBe(first.sessionId);
  const other = `other-${randomBytes(4).toString("hex")}`;
  await chat([user, answer, { role: "user", content: "again" }], { "x-session-id": other });
  expect((await attachedLines(first.sessionId, 4))[3]!.matched).toEqual({ assistant: 2, fingerprint: 0, ids: 1, position: 1, elsewhere: 0 });
  expect((await attachedLines(other, 1))[0]!.matched).toEqual({ assistant: 1, fingerprint: 0, ids: 0, position: 0, elsewhere: 1 });
});
