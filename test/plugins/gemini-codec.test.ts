import { describe, expect, test } from "vitest";
import { createGeminiCodec } from "../../plugins/gemini/codec.js";
import { classifyGeminiError } from "../../plugins/gemini/errors.js";
import { SKIP_SIGNATURE } from "../../plugins/gemini/parts-layout.js";
import type { ChatMessage, JsonObject } from "../../src/providers/contract.js";
import { decodeEvents, fold, replayedAssistant, upstreamCall, wireBody } from "./support/calls.js";
import { chunkJson, chunkLines, json, sseEvents } from "./support/fixtures.js";
import { expectedTurn2, GEMINI_CASSETTES, geminiScenario } from "./support/gemini-cassettes.js";

const skipped: string[] = [];
const codec = createGeminiCodec((_model, name) => skipped.push(name));
const latest = (_collected: JsonObject | undefined, fragment: JsonObject) => fragment;

function call(model: string, stream: boolean, messages: ChatMessage[], request: JsonObject, params?: JsonObject) {
  return upstreamCall({
    plugin: "gemini",
    baseUrl: "https://generativelanguage.googleapis.com",
    model,
    stream,
    effort: typeof request.reasoning_effort === "string" ? request.reasoning_effort : undefined,
    body: { messages, ...request, ...params },
  });
}

function decode(body: string, stream: boolean) {
  return stream ? decodeEvents(codec, sseEvents(body)) : codec.decodeResponse(json(body) as JsonObject);
}

describe.each(GEMINI_CASSETTES)("%s", (path) => {
  const scenario = geminiScenario(path);
  const { interactions, model, stream, request, params, system, user } = scenario;

  test("turn 1: url, key header and body equal the recorded request", () => {
    const wire = wireBody(codec, call(model, stream, [system, user], request, params));
    expect(wire.url).toBe(interactions[0]!.request.url);
    expect(wire.headers["x-goog-api-key"]).toBe("test-key");
    expect(wire.body).toEqual(json(interactions[0]!.request.body));
  });

  test("turn 2 from a stateless history plus the native record equals the recorded request", () => {
    const turn = fold(decode(interactions[0]!.response.body, stream), latest);
    expect(turn.toolCalls.length).toBe(scenario.results.length);
    // thought summaries are the client's reasoning; they are not sent back (the recorded client did not either)
    expect(turn.reasoningText.length > 0).toBe(/\\?"thought\\?"\s*:\s*true/.test(interactions[0]!.response.body));
    const history: ChatMessage[] = [
      system,
      user,
      replayedAssistant(turn),
      ...turn.toolCalls.map((toolCall, index) => ({ role: "tool" as const, tool_call_id: toolCall.id, content: scenario.results[index]! })),
    ];
    const wire = wireBody(codec, call(model, stream, history, request, params));
    expect(wire.body).toEqual(expectedTurn2(scenario));
    expect(JSON.stringify(wire.body)).not.toContain(SKIP_SIGNATURE);
  });

  test("turn 2's answer: thought summaries are reasoning, the signature is kept on its part", () => {
    const turn = fold(decode(interactions[1]!.response.body, stream), latest);
    expect(turn.content.length).toBeGreaterThan(0);
    expect(turn.finishReason).toBe("stop");
    const parts = (turn.nativeRecord?.parts ?? []) as JsonObject[];
    if (interactions[1]!.response.body.includes("thoughtSignature")) expect(parts.some((part) => typeof part.thoughtSignature === "string")).toBe(true);
    expect(turn.reasoningText.length > 0).toBe(/\\?"thought\\?"\s*:\s*true/.test(interactions[1]!.response.body));
  });
});

describe("chunk fixtures", () => {
  test("a stream's trailing empty-text part keeps its signature as its own part and goes back exactly", () => {
    const turn = fold(
      decodeEvents(
        codec,
        chunkLines("google/google-reasoning-gemini3.chunks.txt").map((data) => ({ data })),
      ),
      latest,
    );
    const lines = chunkLines("google/google-reasoning-gemini3.chunks.txt").map(
      (line) => JSON.parse(line) as { candidates: { content: { parts: JsonObject[] } }[] },
    );
    const trailing = lines.at(-1)!.candidates[0]!.content.parts.at(-1)!;
    expect(trailing.text).toBe("");
    const text = lines
      .flatMap((line) => line.candidates[0]!.content.parts)
      .filter((part) => part.text && !part.thought)
      .map((part) => part.text)
      .join("");
    expect(turn.content).toBe(text);
    expect(turn.nativeRecord).toEqual({
      parts: [
        { type: "text", text },
        { type: "text", text: "", thoughtSignature: trailing.thoughtSignature },
      ],
    });
    const wire = wireBody(
      codec,
      call("gemini-3-pro-preview", true, [{ role: "user", content: "How many r's?" }, replayedAssistant(turn), { role: "user", content: "Sure?" }], {}),
    );
    expect((wire.body.contents as JsonObject[])[1]).toEqual({ role: "model", parts: [{ text }, { text: "", thoughtSignature: trailing.thoughtSignature }] });
  });

  test("a non-streamed text answer keeps the signature on the text part", () => {
    const body = chunkJson("google/google-reasoning-gemini3.json") as JsonObject;
    const turn = fold(codec.decodeResponse(body), latest);
    const part = ((body.candidates as JsonObject[])[0]!.content as JsonObject).parts as JsonObject[];
    expect(turn.nativeRecord).toEqual({ parts: [{ type: "text", text: part[0]!.text, thoughtSignature: part[0]!.thoughtSignature }] });
  });

  test("a streamed function call: signature on the call part, the trailing empty text without one is dropped", () => {
    const turn = fold(
      decodeEvents(
        codec,
        chunkLines("google/google-tool-call-gemini3.chunks.txt").map((data) => ({ data })),
      ),
      latest,
    );
    expect(turn.toolCalls[0]!.function).toEqual({ name: "weather", arguments: '{"location":"San Francisco"}' });
    expect(turn.finishReason).toBe("tool_calls");
    const parts = turn.nativeRecord!.parts as JsonObject[];
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "function_call", id: turn.toolCalls[0]!.id, native_id: false });
    expect(String(parts[0]!.thoughtSignature)).toMatch(/^EpEgCo4gAb4/);
  });
});

describe("replay rules", () => {
  const weather = { type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } };

  test("parallel calls: only the first is signed, and only it gets its signature back", () => {
    const response = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { functionCall: { name: "weather", args: { location: "Rome" }, id: "a1" }, thoughtSignature: "SIG_A" },
              { functionCall: { name: "weather", args: { location: "Oslo" }, id: "b2" } },
            ],
          },
          finishReason: "STOP",
        },
      ],
    };
    const turn = fold(codec.decodeResponse(response as unknown as JsonObject), latest);
    const history: ChatMessage[] = [
      { role: "user", content: "Rome and Oslo?" },
      replayedAssistant(turn),
      { role: "tool", tool_call_id: "a1", content: "20" },
      { role: "tool", tool_call_id: "b2", content: "1" },
    ];
    const contents = wireBody(codec, call("gemini-3-pro-preview", false, history, { tools: [weather] })).body.contents as JsonObject[];
    expect(contents[1]!.parts).toEqual([
      { functionCall: { name: "weather", args: { location: "Rome" }, id: "a1" }, thoughtSignature: "SIG_A" },
      { functionCall: { name: "weather", args: { location: "Oslo" }, id: "b2" } },
    ]);
    expect(contents[2]!.parts).toEqual([
      { functionResponse: { name: "weather", response: { result: "20" }, id: "a1" } },
      { functionResponse: { name: "weather", response: { result: "1" }, id: "b2" } },
    ]);
  });

  test("a function call with no stored signature gets the documented skip value, and it is logged", () => {
    skipped.length = 0;
    const foreign: ChatMessage = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_x", type: "function", function: { name: "weather", arguments: '{"location":"Oslo"}' } }],
    };
    const contents = wireBody(
      codec,
      call("gemini-3-pro-preview", false, [{ role: "user", content: "Oslo?" }, foreign, { role: "tool", tool_call_id: "call_x", content: "1" }], {
        tools: [weather],
      }),
    ).body.contents as JsonObject[];
    expect(contents[1]!.parts).toEqual([{ functionCall: { name: "weather", args: { location: "Oslo" } }, thoughtSignature: SKIP_SIGNATURE }]);
    expect(contents[2]!.parts).toEqual([{ functionResponse: { name: "weather", response: { result: "1" } } }]);
    expect(skipped).toEqual(["weather"]);
  });

  test("reasoning_effort maps to thinkingLevel (3) or thinkingBudget (2.5); off asks for no thoughts", () => {
    const config = (model: string, effort?: string, enabled = true) =>
      (
        wireBody(
          codec,
          upstreamCall({
            plugin: "gemini",
            baseUrl: "https://generativelanguage.googleapis.com",
            model,
            effort,
            enabled,
            body: { messages: [{ role: "user", content: "hi" }] },
          }),
        ).body.generationConfig as JsonObject | undefined
      )?.thinkingConfig;
    expect(config("gemini-3-pro-preview", "medium")).toEqual({ thinkingLevel: "HIGH", includeThoughts: true });
    expect(config("gemini-3-flash-preview", "minimal")).toEqual({ thinkingLevel: "MINIMAL", includeThoughts: true });
    expect(config("gemini-2.5-flash", "low")).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(config("gemini-2.5-flash", undefined, false)).toEqual({ includeThoughts: false, thinkingBudget: 0 });
    expect(config("gemini-2.5-pro")).toBeUndefined();
  });
});

test("the classifier names the field of 'Unknown name … Cannot find field'", () => {
  const body = JSON.stringify({
    error: { code: 400, message: "Invalid JSON payload received. Unknown name \"reasoning\" at 'contents[1]': Cannot find field.", status: "INVALID_ARGUMENT" },
  });
  expect(classifyGeminiError(400, body)).toBe("reasoning");
  expect(classifyGeminiError(400, `[${body}]`)).toBe("reasoning");
  expect(classifyGeminiError(400, '{"error":{"message":"Function call is missing a thought_signature"}}')).toBeUndefined();
});

test("edited text goes back without the signatures that belonged to the old text", () => {
  const message: ChatMessage = {
    role: "assistant",
    content: "Edited answer.",
    native_record: {
      parts: [
        { type: "text", text: "Original." },
        { type: "text", text: "", thoughtSignature: "SIG" },
      ],
    },
  };
  const contents = wireBody(codec, call("gemini-3-pro-preview", false, [{ role: "user", content: "q" }, message, { role: "user", content: "again" }], {})).body
    .contents as JsonObject[];
  expect(contents[1]).toEqual({ role: "model", parts: [{ text: "Edited answer." }] });
});
