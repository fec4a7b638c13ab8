import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type OpenAIUpstream, SKIP_THOUGHT_SIGNATURE as SKIP, startOpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";

/**
 * Model switches are safe by rule (docs/sessions-and-replay.md#replay-rules, rule 7): one conversation
 * moves DeepSeek → Gemini (OpenAI-compatible endpoint) → Anthropic →
 * DeepSeek, each model running a tool loop of its own, through a client that
 * keeps no reasoning. Every emulator is strict (DeepSeek wants its own
 * reasoning back on its tool turns, Gemini its signatures, Anthropic its
 * signed thinking), and every request is accepted on the first try: each
 * model gets its own signed carriers back and nobody else's.
 */
const tool = {
  type: "function",
  function: {
    name: "weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

let openai: OpenAIUpstream;
let gemini: OpenAIUpstream;
let anthropic: AnthropicEmulator;
let gateway: TestGateway;
beforeAll(async () => {
  openai = await startOpenAIUpstream();
  gemini = await startOpenAIUpstream({ apiKeys: { gemini: "gemini-key" }, answers: { kind: "steps", steps: 2 } });
  anthropic = await startAnthropicEmulator({ apiKey: "anthropic-key" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${openai.baseUrl("deepseek")}" }
  gemini-openai: { plugin: openai-compatible, base_url: ${gemini.baseUrl("gemini")}, api_key_env: CARRIERD_TEST_GEMINI_KEY }
  anthropic: { plugin: anthropic, base_url: ${anthropic.url}, api_key_env: CARRIERD_TEST_ANTHROPIC_KEY }
models:
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: gemini-3-pro, provider: gemini-openai, model: gemini-3-pro-preview }
  - { name: claude, provider: anthropic, model: claude-sonnet-4-5, params: { max_tokens: 4000, thinking: { type: enabled, budget_tokens: 2000 } } }
carriers:
  # the shipped table's routes for these hosts, matched by provider (the emulators listen on loopback)
  - match: { provider: gemini-openai }
    fields: [extra_content]
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
    env: { CARRIERD_TEST_GEMINI_KEY: "gemini-key", CARRIERD_TEST_ANTHROPIC_KEY: "anthropic-key" },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await openai?.close();
  await gemini?.close();
  await anthropic?.close();
});

/** Every request each upstream received, with its status, from the n-th on. */
const statuses = () => [
  ...openai.received.map((request) => request.status),
  ...gemini.received.map((request) => request.status),
  ...anthropic.received.map((request) => request.status),
];

describe.each([false, true])("stream=%s", (stream) => {
  test("DeepSeek → Gemini (OpenAI endpoint) → Anthropic → DeepSeek: every request accepted first time, no foreign signed carrier anywhere", async () => {
    const before = { openai: openai.received.length, gemini: gemini.received.length, anthropic: anthropic.received.length };
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
    await segment("gemini-3-pro", "And in Rome and Oslo?");
    await segment("claude", "And in Florence again?");
    await segment("deepseek-reasoner", "Summarise.");

    // every request was accepted: no upstream refused one and no fallback resent it
    expect(statuses().every((status) => status === 200)).toBe(true);
    const deepseekBodies = openai.received.slice(before.openai).map((request) => JSON.stringify(request.body));
    const geminiBodies = gemini.received.slice(before.gemini).map((request) => JSON.stringify(request.body));
    const anthropicBodies = anthropic.received.slice(before.anthropic).map((request) => JSON.stringify(request.body));
    expect([deepseekBodies.length, geminiBodies.length, anthropicBodies.length]).toEqual([4, 3, 2]);

    // Gemini: never reasoning_content (it refuses unknown message fields), DeepSeek's turns only with the skip value
    for (const body of geminiBodies) {
      expect(body).not.toContain("reasoning_content");
      expect(body).not.toContain("native_record");
    }
    const geminiLast = gemini.received.at(-1)!.body!.messages as { role: string; tool_calls?: { id: string; extra_content?: unknown }[] }[];
    const deepseekCall = geminiLast.find((message) => message.tool_calls?.[0]?.id.startsWith("call_deepseek"))!;
    expect(deepseekCall.tool_calls![0]!.extra_content).toEqual({ google: { thought_signature: SKIP } });

    // Anthropic: only its own thinking (the emulator checks each signature), no Gemini signature, no extra_content
    for (const body of anthropicBodies) {
      expect(body).not.toContain("thought_signature");
      expect(body).not.toContain("extra_content");
      expect(body).not.toContain("reasoning_content");
    }

    // DeepSeek at the end: no signature of Gemini's or Anthropic's, no extra_content; Anthropic's thinking text may
    // cross as plain reasoning_content (the route allows it), never its signature
    const finalDeepseek = deepseekBodies.at(-1)!;
    expect(finalDeepseek).not.toContain("extra_content");
    expect(finalDeepseek).not.toContain("thought_signature");
    expect(finalDeepseek).not.toContain('"signature"');
    const claudeThinking = anthropic.received.at(-1)!.body!.messages as { role: string; content: string | { type: string; signature?: string }[] }[];
    for (const message of claudeThinking)
      if (Array.isArray(message.content)) for (const block of message.content) if (block.signature) expect(finalDeepseek).not.toContain(block.signature);
  });
});
