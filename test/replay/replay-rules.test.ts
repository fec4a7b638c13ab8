import { describe, expect, test } from "vitest";
import { ModelFamily, modelFamily } from "../../src/routing/carriers/model-family.js";
import { attachStoredCarriers, type ReplayTarget } from "../../src/routing/carriers/replay.js";
import { shapeMessages } from "../../src/routing/carriers/shape-messages.js";
import type { CarrierPolicy, ChatMessage } from "../../src/providers/contract.js";
import { fingerprintMessage } from "../../src/conversation/fingerprint.js";
import type { ReplaySource } from "../../src/storage/turns.js";

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const signed = [{ type: "reasoning.text", text: "plan", signature: "EvgCCkgIDRAB+/==", format: "anthropic-claude-v1", index: 0 }];
const source: ReplaySource = {
  id: "turn_1",
  sessionId: "s",
  plugin: "openai-compatible",
  upstreamModel: "anthropic/claude-haiku-4.5",
  reasoningText: "plan",
  reasoningDetails: signed,
  nativeRecord: { type: "x.native", opaque: "abc" },
};
const policy = (fields: CarrierPolicy["fields"], mustEcho = false): CarrierPolicy => ({
  fields,
  mustEcho,
  requestExtra: undefined,
  native: true,
  replay: undefined,
  routeIndex: 0,
});
const target = (effective: ReplayTarget["effective"], overrides: Partial<ReplayTarget> = {}): ReplayTarget => ({
  plugin: "openai-compatible",
  upstreamModel: "anthropic/claude-haiku-4.5",
  effective,
  native: true,
  pluginHasNative: true,
  family: ModelFamily.shipped,
  ...overrides,
});

describe("replay rules", () => {
  const history: ChatMessage[] = deepFreeze([
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
      reasoning_content: "client copy",
    },
    { role: "tool", tool_call_id: "c1", content: "ok" },
  ]);

  test("the history is never modified; the stored array goes out as the very same value", () => {
    const frozen = JSON.stringify(history);
    const { messages } = attachStoredCarriers(history, new Map([[1, source]]), target(["reasoning_content", "reasoning", "reasoning_details"]));
    const wire = shapeMessages(messages, policy(["reasoning_content", "reasoning", "reasoning_details"]));
    expect(JSON.stringify(history)).toBe(frozen);
    expect(wire[1]).toMatchObject({ reasoning_content: "plan", reasoning: "plan", native_record: source.nativeRecord });
    expect(wire[1]!.reasoning_details).toBe(signed);
    expect(wire[0]).toBe(history[0]);
  });

  test("signed details and native records go only to the same plugin and model family; plain text crosses", () => {
    const { messages } = attachStoredCarriers(
      history,
      new Map([[1, source]]),
      target(["reasoning_content", "reasoning_details"], { upstreamModel: "openai/gpt-5" }),
    );
    expect(messages[1]).toMatchObject({ reasoning_content: "plan" });
    expect(messages[1]).not.toHaveProperty("reasoning_details");
    expect(messages[1]).not.toHaveProperty("native_record");
    const otherPlugin = attachStoredCarriers(history, new Map([[1, source]]), target(["reasoning_details"], { plugin: "gemini" }));
    expect(otherPlugin.messages[1]).not.toHaveProperty("native_record");
    const nativeOff = attachStoredCarriers(history, new Map([[1, source]]), target([], { native: false }));
    expect(nativeOff.messages[1]).not.toHaveProperty("native_record");
  });

  test("the must-echo placeholder is one space, only on tool-call turns, only where reasoning_content is effective", () => {
    const bare: ChatMessage[] = [
      { role: "assistant", content: "text only" },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "assistant", content: null, reasoning_content: "", tool_calls: [{ id: "d", type: "function", function: { name: "f", arguments: "{}" } }] },
    ];
    const wire = shapeMessages(attachStoredCarriers(bare, new Map(), target(["reasoning_content"])).messages, policy(["reasoning_content"], true));
    expect(wire.map((message) => message.reasoning_content)).toEqual([undefined, " ", " "]);
    const rejected = shapeMessages(bare, policy(["reasoning_content"], true), []);
    expect(rejected.map((message) => message.reasoning_content)).toEqual([undefined, undefined, undefined]);
  });

  test("model families ignore snapshot dates and routing variants, nothing else", () => {
    expect(modelFamily("claude-sonnet-4-5-20250929")).toBe(modelFamily("claude-sonnet-4-5"));
    expect(modelFamily("anthropic/claude-haiku-4.5:thinking")).toBe("anthropic/claude-haiku-4.5");
    expect(modelFamily("claude-sonnet-4-5@20250929")).toBe("claude-sonnet-4-5");
    expect(modelFamily("anthropic/claude-haiku-4.5")).not.toBe(modelFamily("anthropic/claude-sonnet-4.5"));
  });
});

describe("fingerprints", () => {
  const call = (args: string, id = "call_1") => [{ id, type: "function" as const, function: { name: "weather", arguments: args } }];
  test("null, absent and empty content are the same; whitespace is trimmed at both ends (Open WebUI's leading newline)", () => {
    const empty = fingerprintMessage({ role: "assistant", content: "" });
    expect(fingerprintMessage({ role: "assistant", content: null })).toBe(empty);
    expect(fingerprintMessage({ role: "assistant" })).toBe(empty);
    expect(fingerprintMessage({ role: "assistant", content: " " })).toBe(empty);
    expect(fingerprintMessage({ role: "assistant", content: "hi \n" })).toBe(fingerprintMessage({ role: "assistant", content: "hi" }));
    expect(fingerprintMessage({ role: "assistant", content: "\nhi" })).toBe(fingerprintMessage({ role: "assistant", content: "hi" }));
    expect(fingerprintMessage({ role: "assistant", content: "hi there" })).not.toBe(fingerprintMessage({ role: "assistant", content: "hithere" }));
    expect(fingerprintMessage({ role: "assistant", content: [{ type: "text", text: "hi" }] })).toBe(fingerprintMessage({ role: "assistant", content: "hi" }));
  });
  test("arguments compare as canonical JSON; tool-call ids count", () => {
    expect(fingerprintMessage({ role: "assistant", tool_calls: call('{"b": 1, "a": {"y": 2, "x": 1}}') })).toBe(
      fingerprintMessage({ role: "assistant", tool_calls: call('{"a":{"x":1,"y":2},"b":1}') }),
    );
    expect(fingerprintMessage({ role: "assistant", tool_calls: call("{}", "call_1") })).not.toBe(
      fingerprintMessage({ role: "assistant", tool_calls: call("{}", "call_2") }),
    );
    expect(fingerprintMessage({ role: "assistant", tool_calls: call('{"a":1}') })).not.toBe(
      fingerprintMessage({ role: "assistant", tool_calls: call('{"a":2}') }),
    );
  });
});
