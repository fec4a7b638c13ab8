import { afterEach, afterAll, beforeAll, expect, test } from "vitest";
import { startConformance, type ConformanceSetup } from "./harness.js";

let setup: ConformanceSetup;
beforeAll(async () => {
  setup = await startConformance();
});
afterAll(() => setup?.stop());
// every answer of /v1/responses in this file is checked against the Open Responses spec
afterEach(() => setup?.spec.verify({ expectSome: true }));

interface ResponseBody {
  id: string;
  status: string;
  output: { id: string; type: string; summary?: { text: string }[]; content?: { text: string }[] }[];
  conversation?: { id: string };
}

async function create(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; session: string | null; body: ResponseBody & { error?: { message: string; param: string | null; type: string } } }> {
  const response = await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", ...body }, headers);
  return { status: response.status, session: response.headers.get("x-session-id"), body: (await response.json()) as never };
}

function lastUpstream(): {
  messages: { role: string; content: unknown; reasoning_content?: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
} & Record<string, unknown> {
  return setup.upstream.requests[setup.upstream.requests.length - 1] as never;
}

test("previous_response_id continues the stored session: same X-Session-Id, history with reasoning upstream, instructions not carried over", async () => {
  const first = await create({ input: "How many r's are in strawberry?", instructions: "Be brief." });
  expect(first.status).toBe(200);
  expect(lastUpstream().messages[0]).toEqual({ role: "system", content: "Be brief." });
  const second = await create({ input: "And raspberry?", previous_response_id: first.body.id });
  expect(second.status).toBe(200);
  expect(second.session).toBe(first.session);
  const messages = lastUpstream().messages;
  expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
  expect(messages[1]!.content).toBe(first.body.output[1]!.content![0]!.text);
  expect(messages[1]!.reasoning_content).toBe(first.body.output[0]!.summary![0]!.text);
});

test("a tool loop over previous_response_id: function_call_output answers the stored call", async () => {
  const tools = [{ type: "function", name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } }];
  const first = await create({ input: "Weather in San Francisco?", tools });
  const call = first.body.output.find((item) => item.type === "function_call") as unknown as { call_id: string };
  expect(call.call_id).toBeTruthy();
  const second = await create({
    previous_response_id: first.body.id,
    tools,
    input: [{ type: "function_call_output", call_id: call.call_id, output: "18°C, fog" }],
  });
  expect(second.status).toBe(200);
  const messages = lastUpstream().messages;
  expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
  expect(messages[1]!.tool_calls![0]!.id).toBe(call.call_id);
  expect(messages[1]!.reasoning_content?.length).toBeGreaterThan(10); // DeepSeek rejects tool turns without it
  expect(messages[2]).toMatchObject({ tool_call_id: call.call_id, content: "18°C, fog" });
});

test("conversation: a new id starts one, the next request continues it", async () => {
  const conversation = `conv_test_${Date.now()}`;
  const first = await create({ input: "How many r's are in strawberry?", conversation });
  expect(first.body.conversation).toEqual({ id: conversation });
  const second = await create({ input: "And raspberry?", conversation: { id: conversation } });
  expect(second.session).toBe(first.session);
  expect(lastUpstream().messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
  const both = await create({ input: "x", conversation, previous_response_id: first.body.id });
  expect(both.status).toBe(400);
});

test("GET and DELETE /v1/responses/{id}; store: false is never retrievable", async () => {
  const stored = await create({ input: "How many r's are in strawberry?" });
  const fetched = await setup.gateway.fetch(`/v1/responses/${stored.body.id}`);
  expect(fetched.status).toBe(200);
  expect(fetched.headers.get("x-session-id")).toBe(stored.session);
  expect(((await fetched.json()) as ResponseBody).output).toEqual(stored.body.output);
  const deleted = await setup.gateway.fetch(`/v1/responses/${stored.body.id}`, { method: "DELETE" });
  expect(await deleted.json()).toEqual({ id: stored.body.id, object: "response", deleted: true });
  expect((await setup.gateway.fetch(`/v1/responses/${stored.body.id}`)).status).toBe(404);
  expect((await setup.gateway.fetch(`/v1/responses/${stored.body.id}`, { method: "DELETE" })).status).toBe(404);

  const unstored = await create({ input: "How many r's are in strawberry?", store: false });
  expect(unstored.status).toBe(200);
  expect((await setup.gateway.fetch(`/v1/responses/${unstored.body.id}`)).status).toBe(404);
  const continued = await create({ input: "more", previous_response_id: unstored.body.id });
  expect(continued.status).toBe(404);
  expect(continued.body.error!.param).toBe("previous_response_id");
});

test("item_reference resolves stored items and joins their session; an unknown one is a 404 naming the item", async () => {
  const first = await create({ input: "How many r's are in strawberry?" });
  const [reasoning, message] = first.body.output;
  const second = await create({
    input: [
      { role: "user", content: "How many r's are in strawberry?" },
      { type: "item_reference", id: reasoning!.id },
      { type: "item_reference", id: message!.id },
      { role: "user", content: "And raspberry?" },
    ],
  });
  expect(second.status).toBe(200);
  expect(second.session).toBe(first.session);
  const assistant = lastUpstream().messages[1]!;
  expect(assistant).toMatchObject({ role: "assistant", content: message!.content![0]!.text, reasoning_content: reasoning!.summary![0]!.text });

  const missing = await create({ input: [{ type: "item_reference", id: "rs_missing" }] });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatchObject({ param: "input[0].id", message: "Item with id 'rs_missing' not found." });
});

test("client-sent reasoning items become the assistant message's carriers", async () => {
  await create({
    input: [
      { role: "user", content: "Hi" },
      { type: "reasoning", id: "rs_client", summary: [{ type: "summary_text", text: "The user greets me." }], encrypted_content: "gAAAA-opaque" },
      { role: "assistant", content: [{ type: "output_text", text: "Hello!" }] },
      { role: "user", content: "How many r's are in strawberry?" },
    ],
  });
  const assistant = lastUpstream().messages[1]!;
  expect(assistant).toMatchObject({ role: "assistant", content: "Hello!", reasoning_content: "The user greets me." });
  // DeepSeek's route allows only reasoning_content: the encrypted blob (kept as reasoning_details) is stripped by replay
  expect(assistant).not.toHaveProperty("reasoning_details");
});

test.each([
  [{ input: "x" }, "model", 400],
  [{ model: "demo" }, "input", 400],
  [{ model: "demo", input: [{ type: "web_search_call", id: "ws_1" }] }, "input[0].type", 400],
  [{ model: "demo", input: [{ role: "robot", content: "x" }] }, "input[0].role", 400],
  [{ model: "demo", input: [{ role: "user", content: [{ type: "input_audio" }] }] }, "input[0].content[0].type", 400],
  [{ model: "demo", input: [{ type: "function_call_output", output: "x" }] }, "input[0].call_id", 400],
  [{ model: "demo", input: "x", tools: [{ type: "web search\n" }] }, "tools[0].type", 400],
  [{ model: "demo", input: "x", tools: [{ type: "namespace", name: "ns", tools: [{ type: "web_search" }] }] }, "tools[0].tools[0].type", 400],
  [{ model: "demo", input: "x", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, "tool_choice", 400],
  [{ model: "demo", input: "x", stream: "yes" }, "stream", 400],
  [{ model: "demo", input: "x", background: true }, "background", 400],
  [{ model: "demo", input: "x", conversation: "bad id!" }, "conversation", 400],
  [{ model: "no-such-model", input: "x" }, "model", 404],
])("bad input %j is an OpenAI-shaped %s", async (body, param, status) => {
  const response = await setup.gateway.post("/v1/responses", body);
  expect(response.status).toBe(status);
  const error = ((await response.json()) as { error: { message: string; type: string; param: string | null; code: string } }).error;
  expect(error.type).toBe("invalid_request_error");
  expect(error.param).toBe(param);
  expect(error.message.length).toBeGreaterThan(0);
});

test("a bad X-Session-Id is a 400; a good one is used as the session", async () => {
  expect((await setup.gateway.post("/v1/responses", { model: "demo", input: "x" }, { "x-session-id": "no spaces" })).status).toBe(400);
  const response = await setup.gateway.post("/v1/responses", { model: "demo", input: "x" }, { "x-session-id": "my-session.1" });
  expect(response.headers.get("x-session-id")).toBe("my-session.1");
});

test("deleting a response in the middle of a chain keeps the later responses' history whole", async () => {
  const first = await create({ input: "How many r's are in strawberry?" });
  const second = await create({ input: "And raspberry?", previous_response_id: first.body.id });
  expect((await setup.gateway.fetch(`/v1/responses/${first.body.id}`, { method: "DELETE" })).status).toBe(200);
  expect((await create({ input: "x", previous_response_id: first.body.id })).status).toBe(404);
  const third = await create({ input: "And blueberry?", previous_response_id: second.body.id });
  expect(third.status).toBe(200);
  expect(lastUpstream().messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
});

test("store: false inside a named conversation: not retrievable, but the conversation continues", async () => {
  const conversation = `conv_unstored_${Date.now()}`;
  const first = await create({ input: "How many r's are in strawberry?", conversation, store: false });
  expect((await setup.gateway.fetch(`/v1/responses/${first.body.id}`)).status).toBe(404);
  await create({ input: "And raspberry?", conversation, store: false });
  expect(lastUpstream().messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
});

test("developer messages become system messages; text-only parts a string; images stay parts", async () => {
  await create({
    input: [
      { role: "developer", content: "Answer in French." },
      {
        role: "user",
        content: [
          { type: "input_text", text: "Hi" },
          { type: "input_text", text: "there" },
        ],
      },
    ],
  });
  expect(lastUpstream().messages.slice(0, 2)).toEqual([
    { role: "system", content: "Answer in French." },
    { role: "user", content: "Hi\nthere" }, // text-only parts become the plain string every upstream reads
  ]);
  await create({
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: "https://example.com/a.png" },
        ],
      },
    ],
  });
  expect(lastUpstream().messages[0]!.content).toEqual([
    { type: "text", text: "What is this?" },
    { type: "image_url", image_url: { url: "https://example.com/a.png" } },
  ]);
});
