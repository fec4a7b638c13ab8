import { afterAll, beforeAll, expect, test } from "vitest";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { type Emulator, type Reply, startEmulator } from "./emulators/http-emulator.js";

// Upstream JSON of a shape the plugins cannot read where they need a value:
// the client gets an upstream error that says what was wrong, never a 500,
// a made-up tool call or a silently short answer.
let upstream: Emulator;
let gateway: TestGateway;

const sse = (...events: unknown[]) => events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join("");
const chunk = (delta: unknown, finish: string | null = null) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const completion = (message: unknown, usage?: unknown) => ({
  id: "c2",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message, finish_reason: "stop" }],
  ...(usage === undefined ? {} : { usage }),
});

/** OpenAI's mid-stream failure: a `data:` line with only `error` (openai-python raises it: https://github.com/openai/openai-python/blob/main/src/openai/_streaming.py). */
const MID_STREAM_ERROR = {
  message: "The server had an error while processing your request. Sorry about that!",
  type: "server_error",
  param: null,
  code: "server_error",
};

/** What each upstream model answers. */
const ANSWERS: Record<string, Reply> = {
  "null-tool-call-stream": { status: 200, sse: sse(chunk({ content: "Hi" }), chunk({ tool_calls: [null] }), chunk({}, "stop"), "[DONE]") },
  "null-tool-call": { status: 200, json: completion({ role: "assistant", content: "Hi", tool_calls: [null] }) },
  "null-body": { status: 200, json: null },
  "error-mid-stream": { status: 200, sse: sse(chunk({ content: "Hi" }), { error: MID_STREAM_ERROR }) },
  "loose-usage": { status: 200, json: completion({ role: "assistant", content: "Hi" }, { prompt_tokens: 3, completion_tokens_details: null, cost: 0.5 }) },
  "null-event": { status: 200, sse: sse({ type: "message_start", message: { id: "msg_1", model: "claude" } }, "null", { type: "message_stop" }) },
};

beforeAll(async () => {
  upstream = await startEmulator((request) => {
    const model = typeof request.body?.model === "string" ? request.body.model : "";
    if (request.path.includes(":streamGenerateContent")) {
      return {
        status: 200,
        sse: sse({ responseId: "r1", modelVersion: "gemini-2.5-flash", candidates: [{ content: { role: "model", parts: [{ text: "Hi" }, null] } }] }),
      };
    }
    return ANSWERS[model] ?? { status: 404, json: { error: { message: `no answer for ${model}` } } };
  });
  const openai = Object.keys(ANSWERS).filter((model) => model !== "null-event");
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-compatible, base_url: ${upstream.url}/v1 }
  anthropic: { plugin: anthropic, base_url: ${upstream.url} }
  gemini: { plugin: gemini, base_url: ${upstream.url} }
models:
${openai.map((model) => `  - { name: ${model}, provider: openai, model: ${model} }`).join("\n")}
  - { name: null-event, provider: anthropic, model: null-event }
  - { name: null-part, provider: gemini, model: gemini-2.5-flash }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

type ErrorBody = { error: { code: string; type: string; message: string } };
type Chunk = { choices?: { delta?: { content?: string; tool_calls?: unknown[] }; finish_reason?: string | null }[] } & Partial<ErrorBody>;

async function streamed(model: string) {
  const response = await gateway.post("/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  const { events } = await readSse(response);
  return events as Chunk[];
}

async function whole(model: string) {
  return gateway.post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });
}

test("a streamed tool_calls entry that is null ends the turn as an upstream error naming it; the upstream's chunks still arrived as sent", async () => {
  const chunks = await streamed("null-tool-call-stream");
  expect(chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? "").join("")).toBe("Hi");
  // carried: the network read holding the null entry reaches the client as the upstream sent it, then carrierd's error
  expect(chunks.filter((chunk) => chunk.choices?.[0]?.delta?.tool_calls).map((chunk) => chunk.choices![0]!.delta!.tool_calls)).toEqual([[null]]);
  expect(chunks.at(-1)!.error).toMatchObject({ type: "upstream_error" });
  expect(chunks.at(-1)!.error!.message).toContain("null where it should send a tool_calls entry");
});

test("an OpenAI error the upstream sends mid-stream ends the stream with that error object, its code kept", async () => {
  const chunks = await streamed("error-mid-stream");
  expect(chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? "").join("")).toBe("Hi");
  expect(chunks.at(-1)!.error).toEqual(MID_STREAM_ERROR);
});

test("a whole answer whose tool_calls entry is null is a 502 naming it, not a 500", async () => {
  const response = await whole("null-tool-call");
  expect(response.status).toBe(502);
  const body = (await response.json()) as ErrorBody;
  expect(body.error.type).toBe("upstream_error");
  expect(body.error.message).toContain("null where it should send a tool_calls entry");
});

test("a whole answer that is JSON null is a 502: not a JSON object", async () => {
  const response = await whole("null-body");
  expect(response.status).toBe(502);
  const body = (await response.json()) as ErrorBody;
  expect(body.error).toMatchObject({ code: "upstream_error", type: "upstream_error" });
  expect(body.error.message).toContain("not a JSON object");
});

test("a usage object without all three counts reaches the client as the upstream sent it, and the turn is served", async () => {
  const response = await whole("loose-usage");
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { content: string } }[]; usage: Record<string, unknown> };
  expect(body.choices[0]!.message.content).toBe("Hi");
  expect(body.usage).toEqual({ prompt_tokens: 3, completion_tokens_details: null, cost: 0.5 });
});

test("Anthropic: a stream event that is JSON null ends the turn as unreadable (upstream_stream_corrupt)", async () => {
  const chunks = await streamed("null-event");
  expect(chunks.at(-1)!.error).toMatchObject({ code: "upstream_stream_corrupt", type: "upstream_error" });
  expect(chunks.at(-1)!.error!.message).toContain("null");
});

test("Gemini: a content part that is null ends the turn as an upstream error naming it", async () => {
  const chunks = await streamed("null-part");
  expect(chunks.at(-1)!.error).toMatchObject({ type: "upstream_error" });
  expect(chunks.at(-1)!.error!.message).toContain("null where it should send a content part");
});
