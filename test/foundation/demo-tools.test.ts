import { afterAll, beforeAll, expect, test } from "vitest";
import { readFixture } from "../support/fixtures-dir.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { chunkDeltas, type Chunk, type StreamSummary } from "./sse-chunks.js";

/**
 * The demo model inside an agent CLI: the first tool such a client offers is
 * a shell. The demo calls a tool only when the message names it or the
 * tool's purpose plainly fits, never one that takes a command, code, a path
 * or a URL, and its answer says it is a simulation.
 */
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

const fn = (name: string, description: string, properties: Record<string, unknown>, required?: string[]) => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, ...(required ? { required } : {}) } },
});
const bash = fn("bash", "Executes a given bash command", { command: { type: "string" }, description: { type: "string" } }, ["command"]);
const read = fn("read", "Reads a file", { filePath: { type: "string" } }, ["filePath"]);
const getWeather = fn(
  "get_weather",
  "Get the current weather for a city",
  { location: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
  ["location", "unit"],
);
const lookup = fn("lookup", "Looks a word up", { query: { type: "string" } }, ["query"]);

async function ask(content: string, tools: unknown[], extra: Record<string, unknown> = {}): Promise<StreamSummary> {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content }], tools, ...extra });
  expect(response.status).toBe(200);
  const { events, done } = await readSse(response);
  expect(done).toBe(true);
  return chunkDeltas(events as Chunk[]);
}

test("an agent's shell and file tools are not called for a question: the demo answers, and says it is a simulation", async () => {
  const summary = await ask("What is 12 * (3 + 4)?", [bash, read]);
  expect(summary.toolCalls).toEqual([]);
  expect(summary.finishReason).toBe("stop");
  expect(summary.content).toMatch(/^\(simulated\) The answer is 84\. It called no tool: carrierd's demo model is a simulation/);
  expect(summary.reasoning).toContain('2 tools offered ("bash", "read"), but the message asks for none by name and none fits it');
});

test.each([
  ["rm -rf ~ && echo done", [bash]],
  ["use bash to run ls -la", [bash]],
  ["call the bash tool with `cat /etc/passwd`", [bash, read]],
  ["read the file /etc/shadow with the read tool", [read]],
])("a prompt that asks for a command is never turned into one: %s", async (prompt, tools) => {
  const summary = await ask(prompt, tools);
  expect(summary.toolCalls).toEqual([]);
  expect(summary.content).toContain("simulation");
  expect(summary.content).toContain("never writes commands, code or file paths");
});

test("asked for the shell by name, the demo declines and says why, in its reasoning and its answer", async () => {
  const summary = await ask("use bash to list the files", [bash]);
  expect(summary.reasoning).toContain('the tool "bash" is offered and the message asks for it by name, but its name says it acts ("bash")');
  expect(summary.content).toContain('It did not call "bash": carrierd\'s demo model is a simulation');
});

test("a weather question calls the weather tool beside a shell, with the place it names and the enum's first value", async () => {
  const summary = await ask("What's the weather in San Francisco today?", [bash, getWeather]);
  expect(summary.finishReason).toBe("tool_calls");
  expect(summary.toolCalls).toHaveLength(1);
  expect(summary.toolCalls[0]!.function.name).toBe("get_weather");
  expect(JSON.parse(summary.toolCalls[0]!.function.arguments)).toEqual({ location: "San Francisco", unit: "celsius" });
  expect(summary.reasoning).toContain('a tool named "get_weather" is offered and it fits a weather question');
});

test("a tool the message names is called, a distinctive name on its own counts, a plain word does not", async () => {
  const named = await ask("Please use the lookup tool for serendipity", [bash, lookup]);
  expect(named.toolCalls.map((call) => call.function.name)).toEqual(["lookup"]);
  expect(named.reasoning).toContain("the message asks for it by name");
  const distinctive = await ask("get_weather for Oslo please", [getWeather]);
  expect(distinctive.toolCalls.map((call) => call.function.name)).toEqual(["get_weather"]);
  const prose = await ask("I read a book yesterday", [read]);
  expect(prose.toolCalls).toEqual([]);
});

test("tool_choice: 'none' calls nothing; a named function is called when it is safe, declined when it takes a path", async () => {
  expect((await ask("What's the weather in Paris?", [getWeather], { tool_choice: "none" })).toolCalls).toEqual([]);
  const forced = await ask("hello", [bash, lookup], { tool_choice: { type: "function", function: { name: "lookup" } } });
  expect(forced.toolCalls.map((call) => call.function.name)).toEqual(["lookup"]);
  expect(forced.reasoning).toContain("the client's tool_choice names it");
  const refused = await ask("hello", [read], { tool_choice: { type: "function", function: { name: "read" } } });
  expect(refused.toolCalls).toEqual([]);
  expect(refused.reasoning).toContain('but it takes "filePath"');
});

test("a fitting tool whose argument is a URL or a path is declined", async () => {
  const fetchWeather = fn("weather_page", "Fetch the weather page", { url: { type: "string" } }, ["url"]);
  const summary = await ask("What's the weather in Rome?", [fetchWeather]);
  expect(summary.toolCalls).toEqual([]);
  expect(summary.reasoning).toContain('but it takes "url"');
});

/** Real first requests of agent CLIs (test/fixtures/clients/), cut after their last user message, sent to the demo. */
test.each([
  "opencode-1.18.33-turn1-req.json",
  "pi-0.73.1-chat-req.json",
  "continue-cli-1.5.47-toolresult-req.json",
  "codex-0.58.0-chat-wire-toolresult-req.json",
  "qwen-code-0.24.4-toolresult-req.json",
])("%s: the agent's real tools, its real prompt: no tool call, a simulated answer", async (file) => {
  const { body } = JSON.parse(readFixture(`clients/${file}`)) as { body: { messages: { role: string }[]; tools: unknown[] } & Record<string, unknown> };
  const lastUser = body.messages.map((message) => message.role).lastIndexOf("user");
  const request = { ...body, model: "demo", messages: body.messages.slice(0, lastUser + 1) };
  const response = await gateway.post("/v1/chat/completions", request);
  expect(response.status).toBe(200);
  const summary = chunkDeltas((await readSse(response)).events as Chunk[]);
  expect(summary.toolCalls).toEqual([]);
  expect(summary.content).toMatch(/^\(simulated\) /);
  expect(summary.content).toContain("simulation");
});
