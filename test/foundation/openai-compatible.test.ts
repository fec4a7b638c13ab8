import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { fixtureJson, fixtureLines } from "../support/fixtures-dir.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { chunkDeltas, type Chunk } from "./sse-chunks.js";

/** Model name (what the emulator replays) → recording under test/fixtures/chunks. */
const RECORDINGS = {
  "deepseek-reasoning": { name: "deepseek/deepseek-reasoning" },
  "deepseek-tool-call": { name: "deepseek/deepseek-tool-call" },
  "groq-reasoning": { name: "groq/groq-reasoning" },
  "alibaba-reasoning": { name: "alibaba/alibaba-reasoning" },
  "mistral-reasoning": { name: "mistral/mistral-reasoning" },
  "bad-temperature": { status: 400, file: "openai/reasoning-model-temperature-error.json" },
  "over-quota": { status: 429, file: "openai/openai-error.1.json" },
  // a 200 whose body is only an error (some providers do this for non-stream requests)
  "error-in-200": { chunks: [], whole: { error: { message: "model overloaded, try later", code: 503 } } },
  "never-ends": {
    endless:
      '{"id":"x","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"reasoning_content":"hmm "},"finish_reason":null}]}',
  },
  // OpenRouter's mid-stream failure: the status was already 200, so the error comes as a chunk
  "fails-mid-stream": {
    chunks: [
      ...fixtureLines("deepseek/deepseek-reasoning").slice(0, 4),
      '{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"x","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}',
    ],
  },
};
const PROVIDER_KEY = "sk-emulated-provider-key";

let upstream: OpenAIUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ answers: { kind: "replay", models: RECORDINGS } });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  recorded: { plugin: openai-compatible, base_url: "${upstream.baseUrl("openai")}", api_key_env: RECORDED_KEY }
  nobody-home: { plugin: openai-compatible, base_url: "http://127.0.0.1:1/v1" }
models:
  - { name: "rec/*", provider: recorded }
  - { name: unreachable, provider: nobody-home }
`,
    env: { RECORDED_KEY: PROVIDER_KEY },
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

/** What a correct relay must reproduce: the recorded reasoning and answer, concatenated (one reasoning text). */
function recordedText(name: string): { reasoning: string; content: string } {
  let reasoning = "";
  let content = "";
  for (const line of fixtureLines(name)) {
    const delta = (JSON.parse(line) as { choices?: { delta?: Record<string, unknown> }[] }).choices?.[0]?.delta;
    if (!delta) continue;
    const plain = delta.reasoning_content ?? delta.reasoning;
    if (typeof plain === "string") reasoning += plain;
    if (typeof delta.content === "string") content += delta.content;
    // Mistral Magistral: content is a list of {type:"thinking"} and {type:"text"} chunks
    if (Array.isArray(delta.content)) {
      for (const part of delta.content as { type: string; text?: string; thinking?: { text: string }[] }[]) {
        if (part.type === "thinking") reasoning += part.thinking!.map((inner) => inner.text).join("");
        if (part.type === "text") content += part.text!;
      }
    }
  }
  return { reasoning, content };
}

async function streamFrom(model: string, extra: Record<string, unknown> = {}) {
  const response = await gateway.post("/v1/chat/completions", {
    model: `rec/${model}`,
    stream: true,
    messages: [{ role: "user", content: "How many r's are in strawberry?" }],
    ...extra,
  });
  expect(response.status).toBe(200);
  const { events, done } = await readSse(response);
  expect(done).toBe(true);
  return chunkDeltas(events as Chunk[]);
}

describe.each([
  ["deepseek-reasoning", "deepseek/deepseek-reasoning"],
  ["groq-reasoning", "groq/groq-reasoning"],
  ["alibaba-reasoning", "alibaba/alibaba-reasoning"],
  ["mistral-reasoning", "mistral/mistral-reasoning"],
])("recorded %s stream", (model, recording) => {
  // a carried route (docs/api.md#carried-chat-completions): the client gets the recording itself, not carrierd's chunks
  test("the stream comes back exactly as recorded, frame by frame, reasoning in the recording's own field", async () => {
    const expected = recordedText(recording);
    expect(expected.reasoning.length).toBeGreaterThan(0);
    const response = await gateway.post("/v1/chat/completions", {
      model: `rec/${model}`,
      stream: true,
      messages: [{ role: "user", content: "How many r's are in strawberry?" }],
    });
    expect(response.status).toBe(200);
    const { events, done } = await readSse(response);
    expect(done).toBe(true);
    expect(events).toEqual(fixtureLines(recording).map((line) => JSON.parse(line) as unknown));
    expect(upstream.received.at(-1)!.body.stream).toBe(true);
  });

  test("non-stream is the recorded body itself, asked of the upstream as the client asked (no stream member)", async () => {
    const response = await gateway.post("/v1/chat/completions", { model: `rec/${model}`, messages: [{ role: "user", content: "How many r's?" }] });
    expect(response.status).toBe(200);
    expect(upstream.received.at(-1)!.body).not.toHaveProperty("stream");
    expect(await response.json()).toEqual(fixtureJson(`${recording}.json`));
  });
});

test("the provider key from api_key_env is sent upstream as a bearer token; carrierd's own key is not", async () => {
  await streamFrom("deepseek-reasoning");
  const headers = upstream.received.at(-1)!.headers;
  expect(headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  expect(JSON.stringify(headers)).not.toContain(gateway.key);
});

test("include_usage: the recorded usage chunk, with its reasoning_tokens", async () => {
  const response = await gateway.post("/v1/chat/completions", {
    model: "rec/deepseek-reasoning",
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user", content: "How many r's?" }],
  });
  const { events } = await readSse(response);
  // the upstream's own usage chunk, as it sent it
  const last = events.at(-1) as Chunk;
  expect(last).toEqual(JSON.parse(fixtureLines("deepseek/deepseek-reasoning").at(-1)!));
  expect(last.usage).toMatchObject({ prompt_tokens: 18, completion_tokens: 219, completion_tokens_details: { reasoning_tokens: 205 } });
  expect(upstream.received.at(-1)!.body.stream_options).toEqual({ include_usage: true });
});

test("a streamed tool call keeps the upstream's id, name and arguments", async () => {
  const lines = fixtureLines("deepseek/deepseek-tool-call").map((line) => JSON.parse(line) as Chunk);
  const recordedCalls = lines.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  const recordedArguments = recordedCalls.map((call) => call.function?.arguments ?? "").join("");
  const stream = await streamFrom("deepseek-tool-call", { tools: [weatherTool] });
  expect(stream.toolCalls).toEqual([{ id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", type: "function", function: { name: "weather", arguments: recordedArguments } }]);
  expect(JSON.parse(recordedArguments)).toEqual({ location: "San Francisco" });
  expect(stream.reasoning).toBe(recordedText("deepseek/deepseek-tool-call").reasoning);
  expect(stream.finishReason).toBe("tool_calls");
});

test("a non-stream tool call mirrors the recorded message", async () => {
  const response = await gateway.post("/v1/chat/completions", {
    model: "rec/deepseek-tool-call",
    tools: [weatherTool],
    messages: [{ role: "user", content: "Weather in SF?" }],
  });
  const body = (await response.json()) as { choices: { message: { tool_calls: unknown[]; reasoning_content: string }; finish_reason: string }[] };
  expect(body).toEqual(fixtureJson("deepseek/deepseek-tool-call.json"));
  expect(body.choices[0]!.message.tool_calls).toEqual([
    { index: 0, id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo", type: "function", function: { name: "weather", arguments: '{"location": "San Francisco"}' } },
  ]);
  expect(body.choices[0]!.message.reasoning_content).toMatch(/^The user is asking for the weather/);
  expect(body.choices[0]!.finish_reason).toBe("tool_calls");
});

describe.each([
  ["bad-temperature", 400, "openai/reasoning-model-temperature-error.json"],
  ["over-quota", 429, "openai/openai-error.1.json"],
])("upstream error %s", (model, status, file) => {
  test.each([false, true])("comes back OpenAI-shaped with the upstream status (stream: %s)", async (stream) => {
    const response = await gateway.post("/v1/chat/completions", { model: `rec/${model}`, stream, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/application\/json/);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
    expect(body.error.message).toBe((fixtureJson(file) as { error: { message: string } }).error.message);
  });
});

const weatherTool = {
  type: "function",
  function: {
    name: "weather",
    description: "Current weather",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

test("an error the upstream sends mid-stream reaches the client as an error event, not a clean finish", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "rec/fails-mid-stream", stream: true, messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  const { events } = await readSse(response);
  // the upstream's chunks up to its error chunk, as it sent them (carried: docs/api.md#carried-chat-completions)
  expect(events).toEqual(RECORDINGS["fails-mid-stream"].chunks.map((line) => JSON.parse(line) as unknown));
  const failure = events.at(-1) as { error?: { message: string; type: string } };
  expect(failure.error?.message).toContain("Provider returned error");
  const summary = chunkDeltas(events as Chunk[]);
  expect(summary.reasoning).toBe("We need to");
  expect(summary.finishReason).toBe("error");
});

test("a client that hangs up mid-stream makes the gateway hang up on the upstream", async () => {
  const response = await gateway.post("/v1/chat/completions", {
    model: "rec/never-ends",
    stream: true,
    messages: [{ role: "user", content: "think forever" }],
  });
  const reader = response.body!.getReader();
  await reader.read();
  const hungUp = upstream.nextHangUp();
  await reader.cancel();
  await hungUp; // without it the upstream stream (and its bill) would run on
  expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
});

test.each([false, true])("an unreachable upstream is a 502 in OpenAI shape naming the provider (stream: %s)", async (stream) => {
  const response = await gateway.post("/v1/chat/completions", { model: "unreachable", stream, messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(502);
  const body = (await response.json()) as { error: { message: string; code: string } };
  expect(body.error.code).toBe("upstream_unreachable");
  expect(body.error.message).toContain("nobody-home");
});

test("a non-stream 200 that carries only an error is a 502 with the upstream's message, not an empty answer", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "rec/error-in-200", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(502);
  const body = (await response.json()) as { error: { message: string; type: string } };
  expect(body.error.message).toContain("model overloaded, try later");
});
