import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * A Responses client on a chat completions route, held to the table of
 * docs/api.md#a-responses-client-on-a-chat-route: the recording upstream
 * shows what arrived, the client's Response what came back. The host says
 * how it served each answer (`service_tier`, `system_fingerprint`), as
 * OpenAI's does.
 */
const log = captureLog();
let upstream: OpenAIUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ served: { service_tier: "flex", system_fingerprint: "fp_7" } });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  local: { plugin: openai-compatible, base_url: "${upstream.baseUrl("local")}" }
models:
  - { name: local-model, provider: local, model: local-model }
carriers:
  - match: {}
    fields: [reasoning]
`,
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

async function responses(body: Record<string, unknown>): Promise<Response> {
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local-model", ...body }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response;
}

const WEATHER = { type: "function", name: "weather", description: "The weather", parameters: { type: "object", properties: { city: { type: "string" } } } };

/** Every field of the Responses wire a client may send, each with a value the table names. */
const EVERY_FIELD = {
  instructions: "Be brief.",
  input: [
    { role: "developer", content: "Use the tools." },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Rome?" }] },
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Rome"}' },
    { type: "function_call_output", call_id: "call_1", output: "timed out", status: "incomplete" },
    { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
    { type: "function_call_output", call_id: "call_2", output: "sunny", status: "completed" },
    { role: "developer", content: "Answer in French." },
    { role: "user", content: "So?" },
  ],
  max_output_tokens: 300,
  temperature: 0.3,
  top_p: 0.9,
  presence_penalty: 0.5,
  frequency_penalty: 0.25,
  parallel_tool_calls: false,
  user: "user-7",
  text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true }, verbosity: "low" },
  reasoning: { effort: "low", summary: "auto" },
  tools: [WEATHER],
  tool_choice: "auto",
  store: false,
  include: ["reasoning.encrypted_content"],
  metadata: { purpose: "test" },
  truncation: "auto",
  prompt_cache_key: "k-1",
  prompt_cache_retention: "24h",
  safety_identifier: "safe-1",
  service_tier: "priority",
  top_logprobs: 2,
  max_tool_calls: 4,
  client_metadata: { origin: "test" },
};

test("every Responses field is passed, mapped or dropped as the table says; developer messages stay where they stand; an incomplete output says so", async () => {
  await responses(EVERY_FIELD);
  expect(upstream.received.at(-1)!.body).toEqual({
    model: "local-model",
    messages: [
      { role: "system", content: "Be brief." },
      // the route's dialect spells developer as system: in its place, not merged
      { role: "system", content: "Use the tools." },
      { role: "user", content: "Weather in Rome?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "Error: timed out" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } }] },
      { role: "tool", tool_call_id: "call_2", content: "sunny" },
      { role: "system", content: "Answer in French." },
      { role: "user", content: "So?" },
    ],
    stream: false,
    tools: [{ type: "function", function: { name: "weather", description: "The weather", parameters: WEATHER.parameters } }],
    tool_choice: "auto",
    parallel_tool_calls: false,
    temperature: 0.3,
    top_p: 0.9,
    presence_penalty: 0.5,
    frequency_penalty: 0.25,
    max_tokens: 300,
    user: "user-7",
    response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
    reasoning_effort: "low",
  });
  const said = log.lines.filter((line) => line.object.door === "responses" && line.object.route === "local-model").map((line) => line.object.field);
  expect(said.sort()).toEqual(
    [
      "truncation",
      "prompt_cache_key",
      "prompt_cache_retention",
      "safety_identifier",
      "service_tier",
      "top_logprobs",
      "max_tool_calls",
      "client_metadata",
      "text.verbosity",
    ].sort(),
  );
});

test("the answer: the tier the host served it on, its usage mapped; whole and streamed", async () => {
  const whole = (await (await responses({ input: "hi", store: false })).json()) as Record<string, unknown>;
  expect(whole).toMatchObject({
    status: "completed",
    service_tier: "flex",
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 30,
    },
  });
  expect(whole).not.toHaveProperty("system_fingerprint"); // a Response has no such field
  const streamed = await readSse(await responses({ input: "hi", store: false, stream: true }));
  const completed = streamed.events.find((event) => (event as { type: string }).type === "response.completed") as { response: Record<string, unknown> };
  expect(completed.response).toMatchObject({ service_tier: "flex", usage: { input_tokens: 10, output_tokens: 20 } });
});

test("a chat client on the same route gets service_tier and system_fingerprint as the host gave them", async () => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local-model", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(await response.json()).toMatchObject({ service_tier: "flex", system_fingerprint: "fp_7" });
});
