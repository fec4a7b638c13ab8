import { afterAll, beforeAll, expect, test } from "vitest";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type OpenAIUpstream, startOpenAIUpstream } from "../support/openai-upstream.js";

/**
 * One chat completions conversation switched between carried and translated
 * routes mid-conversation: DeepSeek (carried) → Anthropic (translated) →
 * Gemini's OpenAI endpoint (carried) → DeepSeek, a tool loop on each. The
 * client keeps every answer's message whole — the carried ones are the
 * upstream's own, with its carriers (`reasoning_content`, a tool call's
 * `extra_content`) — and resends it. Every upstream is strict about what is
 * its own, and every request is accepted the first time: no foreign carrier
 * reaches any of them (docs/sessions-and-replay.md#switching-models).
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
  await Promise.all([openai?.close(), gemini?.close(), anthropic?.close()]);
});

type Message = Record<string, unknown> & { role: string };

test("DeepSeek → Anthropic → Gemini → DeepSeek, a client that resends every answer whole: every request accepted, no foreign carrier upstream", async () => {
  const messages: Message[] = [];
  const segment = async (model: string, question: string) => {
    messages.push({ role: "user", content: question });
    for (let step = 0; step < 6; step++) {
      const response = await gateway.post("/v1/chat/completions", { model, tools: [tool], messages });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      const message = (JSON.parse(text) as { choices: { message: Message & { tool_calls?: { id: string }[] } }[] }).choices[0]!.message;
      messages.push(message);
      if (!message.tool_calls?.length) return;
      for (const call of message.tool_calls) messages.push({ role: "tool", tool_call_id: call.id, content: "20 C" });
    }
    throw new Error(`${model} did not finish its tool loop`);
  };
  await segment("deepseek-reasoner", "Weather in Florence?");
  await segment("claude", "And in Rome?");
  await segment("gemini-3-pro", "And in Rome and Oslo?");
  await segment("deepseek-reasoner", "Summarise.");

  // the client holds Gemini's own signatures, as the carried answers gave them
  expect(JSON.stringify(messages)).toContain("thought_signature");
  const statuses = [...openai.received, ...gemini.received, ...anthropic.received].map((request) => request.status);
  expect(statuses.every((status) => status === 200)).toBe(true);

  // DeepSeek: no Gemini signature, no extra_content, no Anthropic signature; its own reasoning back on its tool turns
  for (const request of openai.received) {
    expect(request.raw).not.toContain("extra_content");
    expect(request.raw).not.toContain("thought_signature");
    expect(request.raw).not.toContain('"signature"');
  }
  // Gemini: never reasoning_content (it refuses unknown message fields)
  for (const request of gemini.received) expect(JSON.stringify(request.body)).not.toContain("reasoning_content");
  // Anthropic: no Gemini signature, no extra_content, no reasoning_content field
  for (const request of anthropic.received) {
    const body = JSON.stringify(request.body);
    expect(body).not.toContain("thought_signature");
    expect(body).not.toContain("extra_content");
    expect(body).not.toContain("reasoning_content");
  }
});
