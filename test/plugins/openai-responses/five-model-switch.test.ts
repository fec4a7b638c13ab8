import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";
import { type OpenAIUpstream, startOpenAIUpstream } from "../../support/openai-upstream.js";
import { ask, type Message } from "../../support/stateless-client.js";
import { startAnthropicEmulator, type AnthropicEmulator } from "../emulators/anthropic-emulator.js";

/**
 * Model switches are safe by rule (docs/sessions-and-replay.md#replay-rules, rule 7), with OpenAI's
 * encrypted reasoning in the mix: one conversation moves DeepSeek → OpenAI
 * Responses → Gemini (OpenAI-compatible endpoint) → Anthropic → DeepSeek,
 * each model running its own tool loop, through a client that keeps no
 * reasoning. Every emulator is strict, every request is accepted on the
 * first try, and no upstream body holds another provider's signed or
 * encrypted carrier: OpenAI's blobs go to OpenAI only, and OpenAI receives
 * nobody else's.
 */
const tool = {
  type: "function",
  function: {
    name: "weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

let deepseek: OpenAIUpstream;
let openai: ResponsesUpstream;
let gemini: OpenAIUpstream;
let anthropic: AnthropicEmulator;
let gateway: TestGateway;
beforeAll(async () => {
  deepseek = await startOpenAIUpstream();
  openai = await startOpenAIResponsesUpstream({ apiKey: "openai-key", steps: 2 });
  gemini = await startOpenAIUpstream({ apiKeys: { gemini: "gemini-key" }, answers: { kind: "steps", steps: 2 } });
  anthropic = await startAnthropicEmulator({ apiKey: "anthropic-key" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${deepseek.baseUrl("deepseek")}" }
  openai: { plugin: openai-responses, base_url: ${openai.url}/v1, api_key_env: CARRIERD_TEST_OPENAI_KEY }
  gemini-openai: { plugin: openai-compatible, base_url: ${gemini.baseUrl("gemini")}, api_key_env: CARRIERD_TEST_GEMINI_KEY }
  anthropic: { plugin: anthropic, base_url: ${anthropic.url}, api_key_env: CARRIERD_TEST_ANTHROPIC_KEY }
models:
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: gpt-5, provider: openai, model: gpt-5 }
  - { name: gemini-3-pro, provider: gemini-openai, model: gemini-3-pro-preview }
  - { name: claude, provider: anthropic, model: claude-sonnet-4-5, params: { max_tokens: 4000, thinking: { type: enabled, budget_tokens: 2000 } } }
carriers:
  # the shipped table's routes for these hosts, matched by provider (the emulators listen on loopback)
  - match: { plugin: openai-responses }
    fields: []
  - match: { provider: gemini-openai }
    fields: [extra_content]
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
    env: { CARRIERD_TEST_OPENAI_KEY: "openai-key", CARRIERD_TEST_GEMINI_KEY: "gemini-key", CARRIERD_TEST_ANTHROPIC_KEY: "anthropic-key" },
  });
});
afterAll(async () => {
  await gateway?.stop();
  for (const server of [deepseek, openai, gemini, anthropic]) await server?.close();
});

const BLOB = /gAAAAA[A-Za-z0-9+/=]{20,}/;

describe.each([false, true])("stream=%s", (stream) => {
  test("DeepSeek → OpenAI Responses → Gemini → Anthropic → DeepSeek: every request accepted first time, no foreign carrier anywhere", async () => {
    const before = { deepseek: deepseek.received.length, openai: openai.received.length, gemini: gemini.received.length, anthropic: anthropic.received.length };
    const messages: Message[] = [];
    const segment = async (model: string, question: string) => {
      messages.push({ role: "user", content: question });
      for (let step = 0; step < 6; step++) {
        const turn = await ask(gateway, { model, stream, tools: [tool], messages });
        expect(turn.error).toBeUndefined();
        expect(turn.status).toBe(200);
        messages.push(turn.kept);
        const calls = (turn.kept.tool_calls as { id: string; function: { name: string } }[] | undefined) ?? [];
        if (calls.length === 0) return;
        for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: "20 C" });
      }
      throw new Error(`${model} did not finish its tool loop`);
    };
    await segment("deepseek-reasoner", `Weather in Florence? (${String(stream)})`);
    await segment("gpt-5", "And in Paris?");
    await segment("gemini-3-pro", "And in Rome and Oslo?");
    await segment("claude", "And in Florence again?");
    await segment("deepseek-reasoner", "Summarise.");

    const received = {
      deepseek: deepseek.received.slice(before.deepseek),
      openai: openai.received.slice(before.openai),
      gemini: gemini.received.slice(before.gemini),
      anthropic: anthropic.received.slice(before.anthropic),
    };
    // every request was accepted: no upstream refused one and no fallback resent it
    for (const requests of Object.values(received)) expect(requests.map((request) => request.status).every((status) => status === 200)).toBe(true);
    expect(Object.values(received).map((requests) => requests.length)).toEqual([4, 3, 3, 2]);

    // OpenAI: its own blobs only, before its own calls; the other models' turns as plain items
    const openaiInput = received.openai.at(-1)!.body!.input as Record<string, unknown>[];
    const reasoningItems = openaiInput.filter((item) => item.type === "reasoning");
    expect(reasoningItems).toHaveLength(2);
    const blobs = reasoningItems.map((item) => String(item.encrypted_content));
    const deepseekCalls = openaiInput.filter((item) => item.type === "function_call" && String(item.call_id).startsWith("call_deepseek"));
    expect(deepseekCalls.length).toBeGreaterThan(0);
    for (const call of deepseekCalls) expect(call.id).toBeUndefined();
    const openaiBody = JSON.stringify(received.openai.at(-1)!.body);
    expect(openaiBody).not.toMatch(/reasoning_content|native_record|thought_signature|"signature"/);

    // nobody else ever sees OpenAI's blobs or item ids
    const others = [...received.deepseek, ...received.gemini, ...received.anthropic].map((request) => request.raw.toString());
    for (const body of others) {
      expect(body).not.toMatch(BLOB);
      expect(body).not.toMatch(/"(rs|fc)_[0-9a-f]{24}/);
      for (const blob of blobs) expect(body).not.toContain(blob);
      expect(body).not.toContain("native_record");
    }
    // Gemini: never reasoning_content; Anthropic: no foreign signature, no extra_content
    for (const request of received.gemini) expect(request.raw.toString()).not.toContain("reasoning_content");
    for (const request of received.anthropic) expect(request.raw.toString()).not.toMatch(/thought_signature|extra_content|reasoning_content/);
    // DeepSeek at the end: no signature of anyone's; OpenAI's summary text may cross as plain reasoning_content (the route allows it)
    const finalDeepseek = received.deepseek.at(-1)!.raw.toString();
    expect(finalDeepseek).not.toMatch(/extra_content|thought_signature|"signature"|encrypted_content/);
  });
});
