import { GoogleGenAI, type Content, type GenerateContentResponse, type Part } from "@google/genai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../support/openai-responses-upstream.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";

/**
 * The Gemini door on routes whose reasoning is signed by their provider: an
 * Anthropic model (thinking blocks whose signatures Anthropic checks) and an
 * OpenAI Responses model (encrypted reasoning blobs). A Gemini client knows
 * neither; the thoughtSignature carrierd gives its function call holds them,
 * so a tool loop is accepted even after its session was removed.
 */
let anthropic: AnthropicEmulator;
let openai: ResponsesUpstream;
let gateway: TestGateway;
let client: GoogleGenAI;

beforeAll(async () => {
  anthropic = await startAnthropicEmulator({ apiKey: "sk-ant-emulated" });
  openai = await startOpenAIResponsesUpstream({ apiKey: "sk-openai-test" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
  openai: { plugin: openai-responses, base_url: ${openai.url}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5-20250929 }
  - { name: gpt-5-codex, provider: openai, model: gpt-5-codex }
carriers:
  - match: { plugin: openai-responses }
    fields: []
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: "sk-ant-emulated", OPENAI_API_KEY: "sk-openai-test" },
  });
  client = new GoogleGenAI({ apiKey: gateway.key, httpOptions: { baseUrl: gateway.url } });
});
afterAll(async () => {
  await gateway?.stop();
  await anthropic?.close();
  await openai?.close();
});

const WEATHER = {
  functionDeclarations: [
    { name: "weather", description: "The weather in a city", parametersJsonSchema: { type: "object", properties: { location: { type: "string" } } } },
  ],
};
const CONFIG = { tools: [WEATHER], maxOutputTokens: 32000, thinkingConfig: { includeThoughts: true, thinkingLevel: "HIGH" as never } };

/** A streamed answer's parts, and the session its answer named. */
async function collect(stream: AsyncGenerator<GenerateContentResponse>): Promise<{ parts: Part[]; session: string | undefined }> {
  const parts: Part[] = [];
  let session: string | undefined;
  for await (const chunk of stream) {
    session ??= chunk.sdkHttpResponse?.headers?.["x-session-id"];
    parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
  }
  return { parts, session };
}

describe.each([
  ["claude-sonnet-4-5", () => anthropic.received],
  ["gpt-5-codex", () => openai.received],
] as const)("on %s", (model, received) => {
  test.each([false, true])("a tool loop (stream=%s), its session removed between the turns: accepted first time from the envelope alone", async (stream) => {
    const before = received().length;
    const question: Content = { role: "user", parts: [{ text: `Weather in Florence? (${model} ${stream})` }] };
    let session: string | undefined;
    let parts: Part[];
    if (stream) ({ parts, session } = await collect(await client.models.generateContentStream({ model, contents: [question], config: CONFIG })));
    else {
      const answer = await client.models.generateContent({ model, contents: [question], config: CONFIG });
      session = answer.sdkHttpResponse!.headers!["x-session-id"];
      parts = answer.candidates![0]!.content!.parts!;
    }
    expect(session).toBeTruthy();
    await storageOf(gateway).sessions.remove(session!);
    expect(parts.some((part) => part.thought === true)).toBe(true);
    const calls = parts.filter((part) => part.functionCall);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.thoughtSignature).toMatch(/^cd1\./);
    const answers: Content = {
      role: "user",
      parts: calls.map((call) => ({ functionResponse: { name: call.functionCall!.name!, id: call.functionCall!.id, response: { output: "sunny" } } })),
    };
    const second = await client.models.generateContent({ model, contents: [question, { role: "model", parts: calls }, answers], config: CONFIG });
    expect(second.text).toMatch(model.startsWith("claude") ? /sunny/ : /Done after 1 tool round/);
    const sent = received().at(-1)!.body!;
    if (model.startsWith("claude")) {
      // the assistant turn starts with the thinking block Anthropic signed, as it requires
      const turn = (sent.messages as { role: string; content: { type: string }[] }[]).find((message) => message.role === "assistant")!;
      expect(turn.content[0]!.type).toBe("thinking");
    } else {
      // the call follows the reasoning item whose blob OpenAI issued
      const input = sent.input as { type: string; encrypted_content?: string }[];
      const call = input.findIndex((item) => item.type === "function_call");
      expect(input[call - 1]).toMatchObject({ type: "reasoning", encrypted_content: expect.stringMatching(/^gAAAAA/) as string });
    }
    expect(
      received()
        .slice(before)
        .map((request) => request.status),
    ).toEqual([200, 200]);
  });
});
