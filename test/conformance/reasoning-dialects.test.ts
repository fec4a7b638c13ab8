import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";
import OpenAI from "openai";
import { afterEach, afterAll, beforeAll, describe, expect, test } from "vitest";
import { startConformance, type ConformanceSetup } from "./harness.js";

let setup: ConformanceSetup;
let client: OpenAI;
beforeAll(async () => {
  setup = await startConformance();
  client = new OpenAI({ apiKey: setup.gateway.key, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0, fetch: setup.spec.fetch });
});
afterAll(() => setup?.stop());
// every answer of /v1/responses in this file is checked against the Open Responses spec
afterEach(() => setup?.spec.verify());

/** Recorded streams whose reasoning arrives under three other spellings: Groq `reasoning`, Mistral `thinking` chunks, Alibaba `reasoning_content`. */
const DIALECTS = ["groq-qwen", "magistral", "qwen3-max"] as const;

describe.each(DIALECTS)("recorded %s stream through real clients", (model) => {
  // carried (docs/api.md#carried-chat-completions): the SDK gets the host's own spelling, as the host streamed it
  test("openai SDK chat stream: reasoning in the host's own spelling, choices on every chunk", async () => {
    const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: "user", content: "2+2?" }] });
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      expect(Array.isArray(chunk.choices)).toBe(true);
      const delta = chunk.choices[0]?.delta as
        | { content?: string | null | { type: string; text?: string; thinking?: { text: string }[] }[]; reasoning_content?: string; reasoning?: string }
        | undefined;
      reasoning += delta?.reasoning_content ?? delta?.reasoning ?? "";
      if (typeof delta?.content === "string") content += delta.content;
      else
        for (const part of delta?.content ?? []) {
          if (part.type === "thinking") reasoning += (part.thinking ?? []).map((inner) => inner.text).join("");
          if (part.type === "text") content += part.text ?? "";
        }
    }
    expect(reasoning.length).toBeGreaterThan(5);
    expect(content.length).toBeGreaterThan(0);
  });

  test("openai SDK responses.stream().finalResponse(): a reasoning item, then the message", async () => {
    const final = await client.responses.stream({ model, input: "2+2?" }).finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect((final.output[0] as OpenAI.Responses.ResponseReasoningItem).summary[0]!.text.length).toBeGreaterThan(5);
  });

  test("AI SDK openai-compatible: reasoning parts and reasoningText", async () => {
    const provider = createOpenAICompatible({ name: "carrierd", baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key });
    const result = streamText({ model: provider.chatModel(model), prompt: "2+2?" });
    const types = new Set<string>();
    for await (const part of result.fullStream) types.add(part.type);
    expect([...types]).toEqual(expect.arrayContaining(["reasoning-start", "reasoning-delta", "reasoning-end", "text-delta"]));
    expect((await result.reasoningText)!.length).toBeGreaterThan(5);
  });
});
