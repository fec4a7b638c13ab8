import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { readFixture } from "../support/fixtures-dir.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { SpecWatch } from "../support/open-responses.js";
import { checkResponseStream, parseEvents } from "./responses-order.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

/**
 * Codex CLI 0.171.0's real requests (test/fixtures/clients/) through a real
 * gateway to a DeepSeek in thinking mode: its `namespace` tool is offered as
 * functions and a call of one comes back as Codex reads it; its `web_search`
 * tool is left out and said so; `hosted_tools: reject` and a forced hosted
 * tool are 400s in the wire shape of the API called.
 */
interface Capture {
  headers: Record<string, string>;
  body: Record<string, unknown> & { input: Record<string, unknown>[]; tools: Record<string, unknown>[] };
}
const codexDefault = JSON.parse(readFixture("clients/codex-0.171.0-default-responses-req.json")) as Capture;
const codexResume = JSON.parse(readFixture("clients/codex-0.171.0-resume-turn-req.json")) as Capture;

const NAMESPACE_FUNCTIONS = ["close_agent", "resume_agent", "send_input", "spawn_agent", "wait_agent"];

let upstream: DeepSeekUpstream;
let gateway: TestGateway;
let log: CapturedLog;
const spec = new SpecWatch();

beforeAll(async () => {
  upstream = await startDeepSeek({ answers: { kind: "recorded" } });
  log = captureLog();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${upstream.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  searcher: { plugin: hosted-search }
models:
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: strict-reasoner, provider: deepseek, model: deepseek-reasoner, hosted_tools: reject }
  - { name: searcher, provider: searcher, hosted_tools: reject }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
`,
    env: { DEEPSEEK_API_KEY: "sk-emulated" },
    pluginDirs: [fileURLToPath(new URL("./fixtures/hosted-search-plugin", import.meta.url))],
    log: log.logger,
    spec,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => {
  upstream.callName = undefined;
});
afterEach(() => spec.verify());

/** Codex's request as it sent it, to `model`, with its own session headers. */
function codexPost(capture: Capture, overrides: Record<string, unknown> = {}): Promise<Response> {
  const { authorization: _key, host: _host, "content-length": _length, "accept-encoding": _encoding, ...headers } = capture.headers;
  return gateway.post("/v1/responses", { ...capture.body, model: "deepseek-reasoner", ...overrides }, headers);
}

function lastUpstream(): DeepSeekUpstream["requests"][number] {
  return upstream.requests[upstream.requests.length - 1]!;
}

function omittedLogLines(model: string): unknown[] {
  return log.lines.filter((line) => line.object.tool_type === "web_search" && line.object.model === model);
}

test("Codex's default request goes through: the namespace's functions are offered, web_search is left out and named in a header", async () => {
  const response = await codexPost(codexDefault);
  expect(response.status).toBe(200);
  expect(response.headers.get("x-carrierd-tools-omitted")).toBe("web_search");
  const final = checkResponseStream(parseEvents(await response.text())) as { tools: { type: string; name: string; namespace?: string }[] };
  // the response echoes the tools the model had: the namespace's functions with their namespace, no web_search
  expect(final.tools.map((tool) => [tool.type, tool.namespace ?? null, tool.name])).toEqual([
    ...["exec_command", "write_stdin", "request_user_input", "view_image"].map((name) => ["function", null, name]),
    ...NAMESPACE_FUNCTIONS.map((name) => ["function", "multi_agent_v1", name]),
    ...["get_goal", "create_goal", "update_goal"].map((name) => ["function", null, name]),
  ]);
  const offered = (lastUpstream().tools ?? []).map((tool) => [tool.type, tool.function?.name]);
  expect(offered).toEqual(
    [
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      ...NAMESPACE_FUNCTIONS.map((name) => `multi_agent_v1__${name}`),
      "get_goal",
      "create_goal",
      "update_goal",
    ].map((name) => ["function", name]),
  );
  // the group's description reaches the model with each of its functions
  const spawn = lastUpstream().tools!.find((tool) => tool.function?.name === "multi_agent_v1__spawn_agent") as { function: { description: string } };
  expect(spawn.function.description).toMatch(/^Tools for spawning and managing sub-agents\. /);
});

test("a call of a namespaced function comes back as Codex reads it, and its resend reaches the upstream under the name it called", async () => {
  upstream.callName = "multi_agent_v1__spawn_agent";
  const response = await codexPost(codexDefault);
  expect(response.status).toBe(200);
  const events = parseEvents(await response.text());
  const final = checkResponseStream(events) as { output: Record<string, unknown>[] };
  const call = final.output.find((item) => item.type === "function_call")!;
  // Codex builds the tool it runs from these two fields (codex-rs/core/src/tools/router.rs, build_tool_call)
  expect(call).toMatchObject({ name: "spawn_agent", namespace: "multi_agent_v1", status: "completed" });
  const added = events.find((event) => event.data.type === "response.output_item.added" && (event.data.item as { type: string }).type === "function_call");
  expect(added!.data.item).toMatchObject({ name: "spawn_agent", namespace: "multi_agent_v1" });
  const reasoning = final.output.find((item) => item.type === "reasoning") as { summary: { text: string }[] };

  // Codex's next request: its history, the turn it was answered (reasoning without encrypted_content, the call), and the call's output
  upstream.callName = undefined;
  const resend = await codexPost(codexDefault, {
    input: [
      ...codexDefault.body.input,
      { type: "reasoning", id: "rs_resent", summary: reasoning.summary.map(({ text }) => ({ type: "summary_text", text })), encrypted_content: null },
      { type: "function_call", name: call.name, namespace: call.namespace, arguments: call.arguments, call_id: call.call_id },
      { type: "function_call_output", call_id: call.call_id, output: '{"agent_id":"agent_1"}' },
    ],
  });
  expect(resend.status).toBe(200);
  await resend.text();
  const messages = lastUpstream().messages;
  const turn = messages[messages.length - 2]!;
  expect(turn).toMatchObject({
    role: "assistant",
    tool_calls: [{ id: call.call_id, type: "function", function: { name: "multi_agent_v1__spawn_agent" } }],
  });
  expect(typeof turn.reasoning_content).toBe("string");
  expect(messages[messages.length - 1]).toMatchObject({ role: "tool", tool_call_id: call.call_id });
});

test("not streamed, and continued by previous_response_id, the namespaced call keeps its shape and its upstream name", async () => {
  upstream.callName = "multi_agent_v1__wait_agent";
  const first = await codexPost(codexDefault, { stream: false, store: true });
  expect(first.status).toBe(200);
  const body = (await first.json()) as { id: string; output: Record<string, unknown>[] };
  const call = body.output.find((item) => item.type === "function_call")!;
  expect(call).toMatchObject({ name: "wait_agent", namespace: "multi_agent_v1" });
  upstream.callName = undefined;
  const next = await codexPost(codexDefault, {
    stream: false,
    previous_response_id: body.id,
    input: [{ type: "function_call_output", call_id: call.call_id, output: "no agents" }],
  });
  expect(next.status).toBe(200);
  await next.json();
  const stored = lastUpstream().messages.find((message) => Array.isArray(message.tool_calls)) as { tool_calls: { function: { name: string } }[] };
  expect(stored.tool_calls[0]!.function.name).toBe("multi_agent_v1__wait_agent");
});

test("Codex's resume request (`codex exec resume --last`) goes through with its resent reasoning items", async () => {
  const response = await codexPost(codexResume);
  expect(response.status).toBe(200);
  checkResponseStream(parseEvents(await response.text()));
  const assistants = lastUpstream().messages.filter((message) => message.role === "assistant" && Array.isArray(message.tool_calls));
  expect(assistants.length).toBe(2);
  for (const message of assistants) expect(message.reasoning_content).toMatch(/Step 1/);
});

test("the omission is logged once per route and tool type, not per request", async () => {
  for (let i = 0; i < 3; i++) {
    const response = await codexPost(codexDefault, { stream: false });
    expect(response.headers.get("x-carrierd-tools-omitted")).toBe("web_search");
    await response.json();
  }
  // however many requests left it out on this route (these three, and any earlier test's), one line
  expect(omittedLogLines("deepseek-reasoner").length).toBe(1);
  const line = log.lines.find((entry) => entry.object.tool_type === "web_search")!;
  expect(line).toMatchObject({ level: "info", object: { provider: "deepseek", upstream_model: "deepseek-reasoner" } });
  expect(line.message).toMatch(/hosted tool left out/);
});

test("hosted_tools: reject refuses the request in the Responses error shape, naming the tool", async () => {
  const calls = upstream.requests.length;
  const response = await codexPost(codexDefault, { model: "strict-reasoner" });
  expect(response.status).toBe(400);
  const { error } = (await response.json()) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ type: "invalid_request_error", code: "invalid_request", param: "tools[8].type" });
  expect(error.message).toMatch(/'web_search'.*hosted_tools: reject/);
  expect(upstream.requests.length).toBe(calls);
});

test.each([
  ["web_search", { type: "web_search" }],
  ["file_search", { type: "file_search" }],
])("a tool_choice forcing %s, which the upstream never sees, is a 400 on tool_choice", async (_type, choice) => {
  const response = await codexPost(codexDefault, { stream: false, tool_choice: choice });
  expect(response.status).toBe(400);
  const { error } = (await response.json()) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ type: "invalid_request_error", param: "tool_choice" });
  expect(error.message).toMatch(/forces a tool of type/);
});

test("a tool_choice naming a namespaced function forces it under its upstream name", async () => {
  const response = await codexPost(codexDefault, { stream: false, tool_choice: { type: "function", name: "close_agent", namespace: "multi_agent_v1" } });
  expect(response.status).toBe(200);
  await response.json();
  expect((lastUpstream() as { tool_choice?: unknown }).tool_choice).toEqual({ type: "function", function: { name: "multi_agent_v1__close_agent" } });
});

test("only hosted tools offered: the request goes on with none, and without the tool_choice that would need one", async () => {
  const response = await gateway.post("/v1/responses", {
    model: "deepseek-reasoner",
    input: "hi",
    tools: [{ type: "web_search_preview" }, { type: "code_interpreter", container: { type: "auto" } }, { type: "image_generation" }],
    tool_choice: "auto",
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-carrierd-tools-omitted")).toBe("web_search_preview, code_interpreter, image_generation");
  await response.json();
  expect(lastUpstream()).not.toHaveProperty("tools");
  expect(lastUpstream()).not.toHaveProperty("tool_choice");
});

test("chat completions: the same rule for hosted tools — left out and named, refused under reject, a 400 when forced", async () => {
  const weather = { type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } };
  const messages = [{ role: "user", content: "Weather in Oslo?" }];
  const omitted = await gateway.post("/v1/chat/completions", { model: "deepseek-reasoner", messages, tools: [weather, { type: "web_search" }] });
  expect(omitted.status).toBe(200);
  expect(omitted.headers.get("x-carrierd-tools-omitted")).toBe("web_search");
  await omitted.json();
  expect(lastUpstream().tools).toEqual([weather]);

  const rejected = await gateway.post("/v1/chat/completions", { model: "strict-reasoner", messages, tools: [weather, { type: "web_search" }] });
  expect(rejected.status).toBe(400);
  expect(((await rejected.json()) as { error: Record<string, unknown> }).error).toMatchObject({ type: "invalid_request_error", param: "tools[1].type" });

  const forced = await gateway.post("/v1/chat/completions", {
    model: "deepseek-reasoner",
    messages,
    tools: [weather, { type: "web_search" }],
    tool_choice: { type: "web_search" },
  });
  expect(forced.status).toBe(400);
  expect(((await forced.json()) as { error: Record<string, unknown> }).error).toMatchObject({ type: "invalid_request_error", param: "tool_choice" });
});

test("a hosted tool the route's plugin runs itself is handed on verbatim, forced or not, and nothing is said left out", async () => {
  const search = { type: "web_search", external_web_access: false };
  const asked = async (api: "responses" | "chat", extra: Record<string, unknown>) => {
    // not watched against the Open Responses spec: it describes function tools only, and the response echoes the hosted tool as sent
    const [path, body] =
      api === "responses"
        ? ["/v1/responses", { model: "searcher", input: "news?", stream: false, ...extra }]
        : ["/v1/chat/completions", { model: "searcher", messages: [{ role: "user", content: "news?" }], ...extra }];
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-carrierd-tools-omitted")).toBeNull();
    const answer = (await response.json()) as {
      output?: { content?: { text: string }[] }[];
      choices?: { message: { content: string } }[];
      tools?: unknown[];
    };
    if (api === "responses") expect(answer.tools).toEqual([search]);
    const text = api === "responses" ? answer.output!.find((item) => item.content)!.content![0]!.text : answer.choices![0]!.message.content;
    return JSON.parse(text) as { tools: unknown[]; tool_choice: unknown };
  };
  // the route says reject, but the upstream runs this type: it is no reason to refuse
  expect(await asked("responses", { tools: [search], tool_choice: { type: "web_search" } })).toEqual({ tools: [search], tool_choice: { type: "web_search" } });
  expect(await asked("chat", { tools: [search], tool_choice: { type: "web_search" } })).toEqual({ tools: [search], tool_choice: { type: "web_search" } });
  // a type it does not run is still refused on this route
  const refused = await gateway.post("/v1/responses", { model: "searcher", input: "x", tools: [search, { type: "file_search" }] });
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as { error: { param: string } }).error.param).toBe("tools[1].type");
});
