import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, streamText, tool, type ModelMessage } from "ai";
import { afterEach, afterAll, beforeAll, describe, expect, test } from "vitest";
import { MODELS, startConformance, type ConformanceSetup } from "./harness.js";

let setup: ConformanceSetup;
/** Request bodies the AI SDK sent to the gateway, to see what it puts on the wire. */
const sent: { url: string; body: Record<string, unknown> }[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  if (typeof init?.body === "string") sent.push({ url: String(input), body: JSON.parse(init.body) as Record<string, unknown> });
  return setup.spec.fetch(input as string | URL | Request, init);
};

beforeAll(async () => {
  setup = await startConformance();
});
afterAll(() => setup?.stop());
// every answer of /v1/responses in this file is checked against the Open Responses spec
afterEach(() => setup?.spec.verify());

const QUESTION = "How many r's are in the word strawberry?";

describe.each(MODELS)("Vercel AI SDK against %s", (model) => {
  test("@ai-sdk/openai-compatible streamText reports reasoning-start / -delta / -end and reasoningText", async () => {
    const provider = createOpenAICompatible({ name: "carrierd", baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key, includeUsage: true });
    const result = streamText({ model: provider.chatModel(model), prompt: QUESTION });
    const types: string[] = [];
    let reasoningDeltas = "";
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === "reasoning-delta") reasoningDeltas += part.text;
      if (part.type === "error") throw part.error;
    }
    expect(types).toContain("reasoning-start");
    expect(types).toContain("reasoning-end");
    expect(types.indexOf("reasoning-start")).toBeLessThan(types.indexOf("reasoning-delta"));
    expect(types.lastIndexOf("reasoning-delta")).toBeLessThan(types.indexOf("reasoning-end"));
    expect(types.indexOf("reasoning-end")).toBeLessThan(types.indexOf("text-delta"));
    const reasoningText = await result.reasoningText;
    expect(reasoningText).toBe(reasoningDeltas);
    expect(reasoningText!.length).toBeGreaterThan(10);
    expect((await result.text).length).toBeGreaterThan(0);
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    expect(await result.finishReason).toBe("stop");
  });

  test("@ai-sdk/openai-compatible tool call round trip", async () => {
    const provider = createOpenAICompatible({ name: "carrierd", baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key });
    const weather = tool({
      description: "Get the weather in a location",
      inputSchema: jsonSchema<{ location: string }>({ type: "object", properties: { location: { type: "string" } }, required: ["location"] }),
    });
    const result = await generateText({ model: provider.chatModel(model), prompt: "What's the weather in San Francisco?", tools: { weather } });
    expect(result.toolCalls[0]!.toolName).toBe("weather");
    expect(result.toolCalls[0]!.input).toHaveProperty("location");
    expect(result.reasoningText?.length).toBeGreaterThan(10);
  });

  test("@ai-sdk/openai Responses provider over two turns, the second by item_reference", async () => {
    const openai = createOpenAI({ baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key, fetch: recordingFetch });
    const first = streamText({ model: openai.responses(model), prompt: QUESTION });
    const types: string[] = [];
    for await (const part of first.fullStream) {
      types.push(part.type);
      if (part.type === "error") throw part.error;
    }
    expect(types).toContain("reasoning-start");
    expect(types.indexOf("reasoning-end")).toBeLessThan(types.indexOf("text-start"));
    const firstReasoning = await first.reasoningText;
    const firstText = await first.text;
    expect(firstReasoning!.length).toBeGreaterThan(10);

    const messages: ModelMessage[] = [
      { role: "user", content: QUESTION },
      ...(await first.response).messages,
      { role: "user", content: "And in the word raspberry?" },
    ];
    const upstreamBefore = setup.upstream.requests.length;
    sent.length = 0;
    const second = await generateText({ model: openai.responses(model), messages });
    const input = sent[0]!.body.input as { type?: string; id?: string }[];
    const references = input.filter((item) => item.type === "item_reference");
    expect(references.map((item) => item.id!.slice(0, 3)).sort()).toEqual(["msg", "rs_"]);
    expect(second.text.length).toBeGreaterThan(0);
    expect(second.reasoningText?.length).toBeGreaterThan(10);

    if (model === "deepseek-reasoner") {
      // the referenced items became the first turn again: its answer, with its reasoning as the carrier DeepSeek reads
      const upstream = setup.upstream.requests[upstreamBefore] as { messages: { role: string; content: string | null; reasoning_content?: string }[] };
      const assistant = upstream.messages.find((message) => message.role === "assistant");
      expect(assistant?.content).toBe(firstText);
      expect(assistant?.reasoning_content).toBe(firstReasoning);
      expect(upstream.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    }
  });

  test("@ai-sdk/openai Responses provider with store: false drops its reasoning; carrierd's store puts it back upstream", async () => {
    const openai = createOpenAI({ baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key, fetch: recordingFetch });
    const providerOptions = { openai: { store: false } };
    const first = await generateText({ model: openai.responses(model), prompt: QUESTION, providerOptions });
    expect(first.reasoningText?.length).toBeGreaterThan(10);
    const messages: ModelMessage[] = [{ role: "user", content: QUESTION }, ...first.response.messages, { role: "user", content: "And in the word raspberry?" }];
    const upstreamBefore = setup.upstream.requests.length;
    sent.length = 0;
    const second = await generateText({ model: openai.responses(model), messages, providerOptions });
    const input = sent[0]!.body.input as { type?: string; summary?: { text: string }[] }[];
    // the SDK skips reasoning it has no encrypted_content for when store is false, and references nothing
    expect(input.some((item) => item.type === "item_reference" || item.type === "reasoning")).toBe(false);
    expect(second.text.length).toBeGreaterThan(0);
    if (model === "deepseek-reasoner") {
      const upstream = setup.upstream.requests[upstreamBefore] as { messages: { role: string; reasoning_content?: string }[] };
      expect(upstream.messages.find((message) => message.role === "assistant")?.reasoning_content).toBe(first.reasoningText);
    }
  });
});
