import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";
import { startAnthropicEmulator, type AnthropicEmulator } from "./emulators/anthropic-emulator.js";
import { startCassetteEmulator, startEmulator, type Emulator } from "./emulators/http-emulator.js";
import { cassette, json } from "./support/fixtures.js";

const KEY = "sk-ant-test";
const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Get weather information for a location",
    parameters: { properties: { location: { description: "the city", type: "string" } }, required: ["location"], type: "object" },
  },
};
const SYSTEM = { role: "system", content: "You are a helpful assistant" };
const USER = { role: "user", content: "What's the weather in Florence, Italy?" };

function routes(anthropicUrl: string, extra = ""): string {
  const others = extra
    ? `  - { name: local-model, provider: local, model: local-model }\n  - { name: strict-model, provider: strict, model: strict-model }`
    : "";
  return `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: ${anthropicUrl}, api_key_env: ANTHROPIC_API_KEY }
${extra}
models:
  - { name: claude, provider: anthropic, model: claude-sonnet-4-20250514, params: { thinking: { type: enabled, budget_tokens: 4000 } } }
  - { name: claude-plain, provider: anthropic, model: claude-sonnet-4-20250514 }
${others}
carriers:
  - match: { provider: strict }
    fields: []
  - match: {}
    fields: [reasoning_content]
`;
}

describe.each([
  ["TestAnthropicThinking/claude-sonnet-4/thinking", false],
  ["TestAnthropicThinking/claude-sonnet-4/thinking-streaming", true],
])("recorded traffic through the daemon: %s", (path, stream) => {
  const interactions = cassette(path);
  let upstream: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    upstream = await startCassetteEmulator(interactions);
    gateway = await startTestGateway({ routes: routes(upstream.url), env: { ANTHROPIC_API_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test("a stateless client's turn 2 reaches Anthropic exactly as the recorded turn 2", async () => {
    const request = { model: "claude", stream, tools: [WEATHER_TOOL], tool_choice: "auto", parallel_tool_calls: true, max_tokens: 4096 };
    const first = await ask(gateway, { ...request, messages: [SYSTEM, USER] });
    expect(first.status).toBe(200);
    expect(first.reasoning).toContain("Florence");
    expect(upstream.received[0]!.body).toEqual(json(interactions[0]!.request.body));
    const toolCall = (first.kept.tool_calls as { id: string }[])[0]!;
    const second = await ask(gateway, { ...request, messages: [SYSTEM, USER, first.kept, { role: "tool", tool_call_id: toolCall.id, content: "40 C" }] });
    expect(second.status).toBe(200);
    expect(upstream.received[1]!.body).toEqual(json(interactions[1]!.request.body));
    expect(upstream.received[1]!.headers["x-api-key"]).toBe(KEY);
  });
});

describe("the HMAC-verifying emulator, through the daemon", () => {
  let anthropic: AnthropicEmulator;
  let openai: OpenAIUpstream;
  let gateway: TestGateway;
  beforeAll(async () => {
    anthropic = await startAnthropicEmulator({ apiKey: KEY, redacted: true });
    openai = await startOpenAIUpstream();
    const extra = `  local: { plugin: openai-compatible, base_url: ${openai.baseUrl("local")} }\n  strict: { plugin: openai-compatible, base_url: ${openai.baseUrl("mistral")} }`;
    gateway = await startTestGateway({ routes: routes(anthropic.url, extra), env: { ANTHROPIC_API_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway.stop();
    await anthropic.close();
    await openai.close();
  });

  async function toolTurn(stream: boolean): Promise<{ history: Message[]; reply: Awaited<ReturnType<typeof ask>> }> {
    const first = await ask(gateway, { model: "claude", stream, tools: [WEATHER_TOOL], messages: [USER] });
    expect(first.status).toBe(200);
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    const history = [USER, first.kept, { role: "tool", tool_call_id: id, content: "20 C" }];
    return { history, reply: await ask(gateway, { model: "claude", stream, tools: [WEATHER_TOOL], messages: history }) };
  }

  test.each([false, true])("stream=%s: signed and redacted blocks survive a stateless round trip", async (stream) => {
    const before = anthropic.received.length;
    const { reply } = await toolTurn(stream);
    expect(reply.status).toBe(200);
    expect(reply.kept.content).toBe("It is 20 C.");
    const sent = anthropic.received[before + 1]!.body as { messages: { role: string; content: { type: string }[] }[] };
    expect(sent.messages[1]!.content.map((block) => block.type)).toEqual(["redacted_thinking", "thinking", "tool_use"]);
    expect(JSON.stringify(sent)).not.toContain("native_record");
    expect(JSON.stringify(sent)).not.toContain("reasoning_content");
  });

  test("reasoning streams to the client as reasoning_content; redacted data never does", async () => {
    const first = await ask(gateway, { model: "claude", stream: true, tools: [WEATHER_TOOL], messages: [USER] });
    expect(first.reasoning).toBe("The user wants weather. I will call it for Florence.");
  });

  test("a tool turn the gateway never saw gets Anthropic's own 400, passed through", async () => {
    const foreign = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "toolu_elsewhere", type: "function", function: { name: "weather", arguments: '{"location":"Oslo"}' } }],
    };
    const reply = await ask(gateway, {
      model: "claude",
      tools: [WEATHER_TOOL],
      messages: [USER, foreign, { role: "tool", tool_call_id: "toolu_elsewhere", content: "1 C" }],
    });
    expect(reply.status).toBe(400);
    expect(reply.error?.message).toContain("Expected `thinking` or `redacted_thinking`, but found `tool_use`");
  });

  test("native records never reach another plugin's route; a strict route sees no carrier", async () => {
    const { history, reply } = await toolTurn(false);
    const full = [...history, reply.kept, { role: "user", content: "Thanks. And tomorrow?" }];
    const local = await ask(gateway, { model: "local-model", messages: full });
    expect(local.status).toBe(200);
    const localBody = openai.requestsFor("local").at(-1)!.raw;
    expect(localBody).not.toContain("native_record");
    expect(localBody).not.toContain("signature");
    expect(localBody).not.toContain("redacted_thinking");
    const strict = await ask(gateway, { model: "strict-model", messages: full });
    expect(strict.status).toBe(200);
    const strictBody = openai.requestsFor("mistral").at(-1)!.body;
    for (const message of strictBody.messages) expect(Object.keys(message).filter((key) => key.startsWith("reasoning") || key === "native_record")).toEqual([]);
  });
});

describe("the emulator itself rejects what the real API rejects", () => {
  let anthropic: AnthropicEmulator;
  beforeAll(async () => {
    anthropic = await startAnthropicEmulator({ apiKey: KEY });
  });
  afterAll(() => anthropic.close());

  async function post(body: unknown): Promise<{ status: number; message: string }> {
    const response = await fetch(`${anthropic.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { error?: { message: string } };
    return { status: response.status, message: json.error?.message ?? "" };
  }

  const turn = (thinking: string, signature: string) => ({
    model: "claude-sonnet-4-5",
    max_tokens: 5000,
    thinking: { type: "enabled", budget_tokens: 4000 },
    tools: [{ name: "weather", input_schema: { type: "object" } }],
    messages: [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking, signature },
          { type: "tool_use", id: "t", name: "weather", input: {} },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] },
    ],
  });

  test("a signature over the exact text passes; one changed byte fails with the exact text", async () => {
    expect((await post(turn("Plan: call weather.", anthropic.sign("Plan: call weather.")))).status).toBe(200);
    expect(await post(turn("Plan: call weather!", anthropic.sign("Plan: call weather.")))).toEqual({
      status: 400,
      message: "messages.1.content.0: Invalid `signature` in `thinking` block",
    });
  });

  test("unknown keys are 'Extra inputs are not permitted'", async () => {
    const body = turn("x", anthropic.sign("x"));
    (body.messages[1] as Record<string, unknown>).native_record = {};
    expect(await post(body)).toEqual({ status: 400, message: "messages.1.native_record: Extra inputs are not permitted" });
  });
});

describe("a stream that fails midway", () => {
  let upstream: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    upstream = await startEmulator(() => ({
      status: 200,
      sse: [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_x","model":"claude-sonnet-4-5","usage":{"input_tokens":5}}}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm"}}\n\n',
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      ].join(""),
    }));
    gateway = await startTestGateway({ routes: routes(upstream.url), env: { ANTHROPIC_API_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test("ends as an error for the client, never as a short answer", async () => {
    const reply = await ask(gateway, { model: "claude", stream: true, messages: [USER] });
    expect(reply.status).not.toBe(200);
    expect(reply.error?.message).toContain("overloaded_error");
  });
});
