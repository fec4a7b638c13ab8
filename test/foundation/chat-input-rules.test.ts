import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

/** Chat completions input that OpenAI refuses is refused here too, naming the parameter (before any upstream is asked). */
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway?.stop());

const user = { role: "user", content: "Weather in Oslo?" };
const call = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{}" } }] };
const weather = { type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } };

test.each([
  ["a tools entry without function", { tools: [{ type: "function" }] }, "tools[0].function"],
  ["a tools entry whose function has no name", { tools: [{ type: "function", function: { description: "x" } }] }, "tools[0].function.name"],
  ["a tools entry whose type is no name", { tools: [{ type: "web search\n" }] }, "tools[0].type"],
  ["a tool_choice forcing a hosted tool the upstream cannot run", { tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, "tool_choice"],
  ["function parameters that are no object", { tools: [{ type: "function", function: { name: "f", parameters: "x" } }] }, "tools[0].function.parameters"],
  ["an unknown tool_choice", { tool_choice: "sometimes" }, "tool_choice"],
  ["a function tool_choice without a name", { tool_choice: { type: "function" } }, "tool_choice.function.name"],
  ["a tool message answering no call", { messages: [user, { role: "tool", tool_call_id: "call_9", content: "1 C" }] }, "messages[1].tool_call_id"],
  ["a tool message answering another call", { messages: [user, call, { role: "tool", tool_call_id: "call_2", content: "1 C" }] }, "messages[2].tool_call_id"],
  ["a tool message without tool_call_id", { messages: [user, call, { role: "tool", content: "1 C" }] }, "messages[2].tool_call_id"],
  ["a user message without content", { messages: [{ role: "user" }] }, "messages[0].content"],
])("%s is a 400 naming %s", async (_what, overrides, param) => {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", messages: [user], ...overrides });
  expect(response.status).toBe(400);
  const { error } = (await response.json()) as { error: { message: string; type: string; param: string; code: string } };
  expect(error).toMatchObject({ type: "invalid_request_error", param });
  expect(error.message.length).toBeGreaterThan(10);
});

test("the well-formed tool loop still passes", async () => {
  const response = await gateway.post("/v1/chat/completions", {
    model: "demo",
    tools: [weather],
    tool_choice: { type: "function", function: { name: "weather" } },
    messages: [user, call, { role: "tool", tool_call_id: "call_1", content: "1 C" }],
  });
  expect(response.status).toBe(200);
});

test("a hosted tool offered beside a function is left out of the upstream request, and the answer says so", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", tools: [weather, { type: "web_search" }], messages: [user] });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-carrierd-tools-omitted")).toBe("web_search");
});

test("the demo counts words in good grammar: 1 word, 2 words", async () => {
  const reasoningOf = async (content: string) =>
    (
      (await (await gateway.post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content }] })).json()) as {
        choices: { message: { reasoning_content: string } }[];
      }
    ).choices[0]!.message.reasoning_content;
  expect(await reasoningOf("hello")).toContain("has 1 word;");
  expect(await reasoningOf("hello there")).toContain("has 2 words;");
});
