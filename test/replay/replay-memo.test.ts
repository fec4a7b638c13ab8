import { describe, expect, test } from "vitest";
import { attachStoredCarriers, type ReplayTarget } from "../../src/routing/carriers/replay.js";
import { chatBodyBytes } from "../../src/providers/chat-json.js";
import type { ChatMessage, ChatRequest } from "../../src/providers/contract.js";
import type { ReplaySource } from "../../src/storage/turns.js";
import { ModelFamily } from "../../src/routing/carriers/model-family.js";

const target = (effective: ReplayTarget["effective"], overrides: Partial<ReplayTarget> = {}): ReplayTarget => ({
  plugin: "openai-compatible",
  upstreamModel: "deepseek-v4",
  effective,
  native: true,
  pluginHasNative: false,
  family: ModelFamily.shipped,
  ...overrides,
});
const sourceOf = (id: string, reasoningText: string): ReplaySource => ({
  id,
  sessionId: "s",
  plugin: "openai-compatible",
  upstreamModel: "deepseek-v4",
  reasoningText,
  reasoningDetails: undefined,
  nativeRecord: undefined,
});

/** What a stateless client resends each turn: fresh objects parsed from its JSON, equal to last time's. */
const resent = (content: string): ChatMessage[] =>
  JSON.parse(
    JSON.stringify([
      { role: "user", content: "q" },
      { role: "assistant", content },
      { role: "user", content: "next" },
    ]),
  ) as ChatMessage[];

describe("replaying the same stored turn again", () => {
  test("an equal client message and target get the very same wire message, and the upstream bytes are JSON.stringify's", () => {
    const sources = new Map([[1, sourceOf("turn_a", 'thought ✓ "quoted" \u2028')]]);
    const first = attachStoredCarriers(resent("answer 🙂"), sources, target(["reasoning_content"]));
    const second = attachStoredCarriers(resent("answer 🙂"), sources, target(["reasoning_content"]));
    expect(second.messages[1]).toBe(first.messages[1]);
    expect(second.attached).toEqual([{ index: 1, turn: "turn_a", fields: ["reasoning_content"] }]);
    for (const run of [first, second, second]) {
      const body: ChatRequest = { model: "deepseek-v4", messages: run.messages, stream: true, temperature: undefined, stop: ["\n"] };
      expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
    }
  });

  test("a client message that changed, or another target, is replayed anew", () => {
    const sources = new Map([[1, sourceOf("turn_b", "plan")]]);
    const first = attachStoredCarriers(resent("answer"), sources, target(["reasoning_content"]));
    const edited = attachStoredCarriers(resent("answer, edited"), sources, target(["reasoning_content"]));
    expect(edited.messages[1]).not.toBe(first.messages[1]);
    expect(edited.messages[1]).toEqual({ role: "assistant", content: "answer, edited", reasoning_content: "plan" });
    const otherFields = attachStoredCarriers(resent("answer, edited"), sources, target(["reasoning"]));
    expect(otherFields.messages[1]).toEqual({ role: "assistant", content: "answer, edited", reasoning: "plan" });
    const body: ChatRequest = { model: "m", messages: otherFields.messages };
    expect(JSON.parse(chatBodyBytes(body).toString())).toEqual(body);
  });

  test("the bytes of a message are its own: two turns replayed in one body keep their order and content", () => {
    const sources = new Map([
      [1, sourceOf("turn_c", "first thought")],
      [3, sourceOf("turn_d", "second thought")],
    ]);
    const history = (): ChatMessage[] =>
      JSON.parse(
        JSON.stringify([
          { role: "user", content: "1" },
          { role: "assistant", content: "one" },
          { role: "user", content: "2" },
          { role: "assistant", content: "two" },
          { role: "user", content: "3" },
        ]),
      ) as ChatMessage[];
    attachStoredCarriers(history(), sources, target(["reasoning_content"]));
    const { messages } = attachStoredCarriers(history(), sources, target(["reasoning_content"]));
    const body: ChatRequest = { messages, model: "m" };
    expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
  });

  test("the prompt before a replayed turn (system, user, tool results) is handed out as the same objects when resent unchanged, and an edited one is not", () => {
    const sources = new Map([[2, sourceOf("turn_e", "thinking")]]);
    const history = (question: string): ChatMessage[] =>
      JSON.parse(
        JSON.stringify([
          { role: "system", content: "be brief" },
          { role: "user", content: question },
          { role: "assistant", content: "answer" },
          { role: "user", content: "next" },
        ]),
      ) as ChatMessage[];
    const first = attachStoredCarriers(history("question"), sources, target(["reasoning_content"]));
    const again = attachStoredCarriers(history("question"), sources, target(["reasoning_content"]));
    expect(again.messages[0]).toBe(first.messages[0]);
    expect(again.messages[1]).toBe(first.messages[1]);
    expect(again.messages[3]).not.toBe(first.messages[3]); // the new message is the client's own
    const edited = attachStoredCarriers(history("question, edited"), sources, target(["reasoning_content"]));
    expect(edited.messages[1]).toEqual({ role: "user", content: "question, edited" });
    expect(edited.messages[0]).not.toBe(first.messages[0]); // the prompt is compared as a whole
    for (const run of [first, again, edited, attachStoredCarriers(history("question, edited"), sources, target(["reasoning_content"]))]) {
      const body: ChatRequest = { model: "m", messages: run.messages };
      expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
    }
  });

  test("large messages are replayed and sent right, but not kept: a memo entry holds at most 32 K characters of each", () => {
    const sources = new Map([[2, sourceOf("turn_f", "plan")]]);
    const big = "x".repeat(40_000);
    const history = (question: string, answer: string): ChatMessage[] =>
      JSON.parse(
        JSON.stringify([
          { role: "system", content: "s" },
          { role: "user", content: question },
          { role: "assistant", content: answer },
          { role: "user", content: "next" },
        ]),
      ) as ChatMessage[];
    const bigAnswer = [
      attachStoredCarriers(history("q", big), sources, target(["reasoning_content"])),
      attachStoredCarriers(history("q", big), sources, target(["reasoning_content"])),
    ];
    expect(bigAnswer[1]!.messages[2]).not.toBe(bigAnswer[0]!.messages[2]);
    expect(bigAnswer[1]!.messages[2]).toEqual({ role: "assistant", content: big, reasoning_content: "plan" });
    const bigPrompt = [
      attachStoredCarriers(history(big, "a"), sources, target(["reasoning_content"])),
      attachStoredCarriers(history(big, "a"), sources, target(["reasoning_content"])),
    ];
    expect(bigPrompt[1]!.messages[2]).toBe(bigPrompt[0]!.messages[2]); // the answer is kept
    expect(bigPrompt[1]!.messages[1]).not.toBe(bigPrompt[0]!.messages[1]); // its prompt is not
    for (const run of [...bigAnswer, ...bigPrompt]) {
      const body: ChatRequest = { model: "m", messages: run.messages };
      expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
    }
  });
});
