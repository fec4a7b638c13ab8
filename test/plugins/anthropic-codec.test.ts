import { describe, expect, test } from "vitest";
import { createAnthropicCodec } from "../../plugins/anthropic/codec.js";
import { mergeLayout } from "../../plugins/anthropic/content-layout.js";
import { classifyAnthropicError } from "../../plugins/anthropic/errors.js";
import type { ChatMessage, JsonObject } from "../../src/providers/contract.js";
import { decodeEvents, fold, replayedAssistant, upstreamCall, wireBody } from "./support/calls.js";
import { cassette, chunkJson, chunkLines, json, sseEvents } from "./support/fixtures.js";

const codec = createAnthropicCodec(() => {});
const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Get weather information for a location",
    parameters: { properties: { location: { description: "the city", type: "string" } }, required: ["location"], type: "object" },
  },
};
const SYSTEM: ChatMessage = { role: "system", content: "You are a helpful assistant" };
const USER: ChatMessage = { role: "user", content: "What's the weather in Florence, Italy?" };

/** What the core hands the plugin: the client's request, params merged (thinking from routes.yaml). */
function call(messages: ChatMessage[], stream: boolean) {
  return upstreamCall({
    plugin: "anthropic",
    baseUrl: "https://api.anthropic.com",
    model: "claude-sonnet-4-20250514",
    stream,
    body: {
      messages,
      tools: [WEATHER_TOOL],
      tool_choice: "auto",
      parallel_tool_calls: true,
      max_tokens: 4096,
      thinking: { type: "enabled", budget_tokens: 4000 },
    },
  });
}

describe.each([
  ["TestAnthropicThinking/claude-sonnet-4/thinking", false],
  ["TestAnthropicThinking/claude-sonnet-4/thinking-streaming", true],
])("%s", (path, stream) => {
  const [first, second] = cassette(path);

  test("turn 1: the request equals the recorded one", () => {
    const wire = wireBody(codec, call([SYSTEM, USER], stream));
    expect(wire.url).toBe("https://api.anthropic.com/v1/messages");
    expect(wire.headers["anthropic-version"]).toBe("2023-06-01");
    expect(wire.headers["x-api-key"]).toBe("test-key");
    expect(wire.body).toEqual(json(first!.request.body));
  });

  test("turn 2 rebuilt from a stateless history plus the native record equals the recorded request", () => {
    const parts = stream ? decodeEvents(codec, sseEvents(first!.response.body)) : codec.decodeResponse(json(first!.response.body) as never);
    const turn = fold(parts, mergeLayout);
    const recordedThinking = (json(second!.request.body).messages as { content: unknown[] }[])[1]!.content[0];
    expect(turn.reasoningText).toBe((recordedThinking as { thinking: string }).thinking);
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.finishReason).toBe("tool_calls");
    const history: ChatMessage[] = [SYSTEM, USER, replayedAssistant(turn), { role: "tool", tool_call_id: turn.toolCalls[0]!.id, content: "40 C" }];
    const wire = wireBody(codec, call(history, stream));
    expect(wire.body).toEqual(json(second!.request.body));
    // the signed block goes out byte for byte, never re-serialised
    expect(JSON.stringify(wire.body)).toContain(JSON.stringify((recordedThinking as { signature: string }).signature));
    expect(JSON.stringify(wire.body)).not.toContain("native_record");
  });

  test("turn 2's answer decodes to text with usage", () => {
    const parts = stream ? decodeEvents(codec, sseEvents(second!.response.body)) : codec.decodeResponse(json(second!.response.body) as never);
    const turn = fold(parts, mergeLayout);
    expect(turn.content).toContain("Florence");
    expect(turn.finishReason).toBe("stop");
    expect(turn.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(turn.nativeRecord).toEqual({ content: [{ type: "text", text: turn.content }] });
  });
});

test("cache_control cassette: the replayed thinking block is the recorded one", () => {
  const [first, second] = cassette("TestAnthropicThinkingWithCacheControl/claude-sonnet-4/thinking");
  const turn = fold(codec.decodeResponse(json(first!.response.body) as never), mergeLayout);
  const history: ChatMessage[] = [SYSTEM, USER, replayedAssistant(turn), { role: "tool", tool_call_id: turn.toolCalls[0]!.id, content: "40 C" }];
  const sent = wireBody(codec, call(history, false)).body.messages as { content: Record<string, unknown>[] }[];
  const recorded = json(second!.request.body).messages as { content: Record<string, unknown>[] }[];
  expect(sent[1]!.content[0]).toEqual(recorded[1]!.content[0]);
  expect(sent[1]!.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
});

test("chunk fixture: streamed thinking, signature and text fold to the non-streamed shape", () => {
  const events = chunkLines("anthropic/anthropic-clear-thinking.1.chunks.txt").map((data) => ({ data }));
  const turn = fold(decodeEvents(codec, events), mergeLayout);
  expect(turn.reasoningText).toBe("The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185");
  expect(turn.content).toBe("925 ÷ 5 = 185");
  const blocks = (turn.nativeRecord as { content: Record<string, string>[] }).content;
  expect(blocks.map((block) => block.type)).toEqual(["thinking", "text"]);
  expect(blocks[0]!.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N.*BgB$/);
  const whole = fold(codec.decodeResponse(chunkJson("anthropic/anthropic-clear-thinking.1.json") as never), mergeLayout);
  expect((whole.nativeRecord as { content: unknown[] }).content[0]).toEqual((chunkJson("anthropic/anthropic-clear-thinking.1.json").content as unknown[])[0]);
});

test("chunk fixture: opus 5 high-effort answer keeps its signature verbatim", () => {
  const body = chunkJson("anthropic/anthropic-claude-opus-5-reasoning-high.1.json");
  const turn = fold(codec.decodeResponse(body as never), mergeLayout);
  expect((turn.nativeRecord as { content: unknown[] }).content[0]).toEqual((body.content as unknown[])[0]);
  expect(turn.reasoningText.length).toBeGreaterThan(0);
});

describe("redacted thinking", () => {
  test("is stored whole, never shown, and replayed before the tool_use it preceded", () => {
    const response = {
      id: "msg_1",
      model: "claude-sonnet-4-5",
      content: [
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" },
        { type: "thinking", thinking: "Let me check.", signature: "sig-1" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Rome" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const turn = fold(codec.decodeResponse(response as never), mergeLayout);
    expect(turn.reasoningText).toBe("Let me check.");
    expect(JSON.stringify(turn)).not.toContain("reasoning_content");
    const wire = wireBody(codec, call([USER, replayedAssistant(turn), { role: "tool", tool_call_id: "toolu_1", content: "20 C" }], false));
    const assistant = (wire.body.messages as { content: unknown[] }[])[1]!;
    expect(assistant.content).toEqual([
      response.content[0],
      response.content[1],
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Rome" } },
    ]);
  });
});

describe("request shape", () => {
  const base = (overrides: Partial<Parameters<typeof upstreamCall>[0]> = {}) =>
    upstreamCall({ plugin: "anthropic", baseUrl: "https://api.anthropic.com", model: "claude-sonnet-4-5", body: { messages: [USER] }, ...overrides });

  test("reasoning_effort becomes a thinking budget, with max_tokens kept above it", () => {
    const body = wireBody(codec, base({ effort: "high", body: { messages: [USER], max_tokens: 1000, temperature: 0.2 } })).body;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });
    expect(body.max_tokens).toBe(17384);
    expect(body.temperature).toBeUndefined();
  });

  test("params thinking stays; max_tokens defaults above the budget", () => {
    const body = wireBody(codec, base({ body: { messages: [USER], thinking: { type: "enabled", budget_tokens: 8000 } } })).body;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
    expect(body.max_tokens).toBe(8000 + 4096);
  });

  test("reasoning disabled removes thinking; adaptive thinking takes effort as output_config", () => {
    expect(
      wireBody(codec, base({ enabled: false, body: { messages: [USER], thinking: { type: "enabled", budget_tokens: 8000 } } })).body.thinking,
    ).toBeUndefined();
    const adaptive = wireBody(codec, base({ effort: "low", body: { messages: [USER], thinking: { type: "adaptive" } } })).body;
    expect(adaptive.output_config).toEqual({ effort: "low" });
    expect(adaptive.thinking).toEqual({ type: "adaptive" });
  });

  test("OpenAI-only keys never reach Anthropic; system and developer become system blocks", () => {
    const body = wireBody(
      codec,
      base({
        body: {
          messages: [SYSTEM, { role: "developer", content: "Be brief." }, USER],
          frequency_penalty: 1,
          n: 1,
          stream_options: { include_usage: true },
          stop: "END",
          metadata: { app: "x" },
          // a tier Anthropic has no word for (auto and default are mapped: test/translation/chat-on-anthropic.test.ts)
          service_tier: "flex",
          user: "u1",
        },
      }),
    ).body;
    expect(Object.keys(body).sort()).toEqual(["max_tokens", "messages", "metadata", "model", "stop_sequences", "system"]);
    expect(body.metadata).toEqual({ user_id: "u1" });
    expect(body.system).toEqual([
      { type: "text", text: "You are a helpful assistant" },
      { type: "text", text: "Be brief." },
    ]);
  });

  test("an assistant turn from elsewhere (no record) is text then tool_use, no invented thinking", () => {
    const history: ChatMessage[] = [
      USER,
      {
        role: "assistant",
        content: "ok",
        reasoning_content: "plain text from elsewhere",
        tool_calls: [{ id: "t1", type: "function", function: { name: "weather", arguments: '{"location":"Rome"}' } }],
      },
    ];
    const assistant = (wireBody(codec, base({ body: { messages: history } })).body.messages as { content: unknown[] }[])[1]!;
    expect(assistant.content).toEqual([
      { type: "text", text: "ok" },
      { type: "tool_use", id: "t1", name: "weather", input: { location: "Rome" } },
    ]);
  });

  test("Vertex AI: model in the path, anthropic_version in the body, bearer token", () => {
    const wire = wireBody(
      codec,
      base({ baseUrl: "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5", stream: true, apiKey: "ya29.token" }),
    );
    expect(wire.url).toBe(
      "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict",
    );
    expect(wire.body.model).toBeUndefined();
    expect(wire.body.anthropic_version).toBe("vertex-2023-10-16");
    expect(wire.headers.authorization).toBe("Bearer ya29.token");
  });
});

test("the classifier names the field of 'Extra inputs are not permitted'", () => {
  const body = JSON.stringify({
    type: "error",
    error: { type: "invalid_request_error", message: "messages.65.content.1.tool_use.text: Extra inputs are not permitted" },
  });
  expect(classifyAnthropicError(400, body)).toBe("text");
  expect(classifyAnthropicError(400, '{"message":"The model returned the following errors: reasoning_effort: Extra inputs are not permitted"}')).toBe(
    "reasoning_effort",
  );
  expect(classifyAnthropicError(400, '{"error":{"message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}')).toBeUndefined();
  expect(classifyAnthropicError(500, body)).toBeUndefined();
});

describe("rebuilding a turn the client changed", () => {
  const record: JsonObject = {
    content: [
      { type: "thinking", thinking: "Plan.", signature: "S1" },
      { type: "text", text: "Part one. " },
      { type: "text", text: "Part two." },
      { type: "tool_use", id: "t1" },
    ],
  };
  const toolCall = { id: "t1", type: "function" as const, function: { name: "weather", arguments: '{"location":"Rome"}' } };
  const assistantOf = (message: ChatMessage) =>
    (
      wireBody(
        codec,
        upstreamCall({ plugin: "anthropic", baseUrl: "https://api.anthropic.com", model: "claude-sonnet-4-5", body: { messages: [USER, message] } }),
      ).body.messages as { content: unknown[] }[]
    )[1]!.content;

  test("unchanged text keeps the stored split into blocks (trailing whitespace aside)", () => {
    expect(assistantOf({ role: "assistant", content: "Part one. Part two.  ", tool_calls: [toolCall], native_record: record })).toEqual([
      (record.content as JsonObject[])[0],
      { type: "text", text: "Part one. " },
      { type: "text", text: "Part two." },
      { type: "tool_use", id: "t1", name: "weather", input: { location: "Rome" } },
    ]);
  });

  test("edited text replaces the stored text in its place; the signed block stays; unknown tool calls go last", () => {
    const extra = { id: "t2", type: "function" as const, function: { name: "weather", arguments: "" } };
    expect(assistantOf({ role: "assistant", content: "Edited.", tool_calls: [toolCall, extra], native_record: record })).toEqual([
      (record.content as JsonObject[])[0],
      { type: "text", text: "Edited." },
      { type: "tool_use", id: "t1", name: "weather", input: { location: "Rome" } },
      { type: "tool_use", id: "t2", name: "weather", input: {} },
    ]);
  });
});
