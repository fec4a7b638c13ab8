import { GoogleGenAI, type Content, type GenerateContentResponse, type Part } from "@google/genai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SKIP, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";

/**
 * Google's own SDK (@google/genai) against carrierd's Gemini door, on a
 * DeepSeek route (translated: reasoning as thought parts, the tool-call
 * turn's reasoning_content replayed from the thoughtSignature envelope) and
 * on a Gemini route (carried: the client's body as it sent it, Gemini's own
 * signatures reaching it byte for byte both ways). Both upstreams refuse
 * a tool-call turn resent without what they issued with it.
 */
let deepseek: DeepSeekUpstream;
let gemini: Emulator;
let gateway: TestGateway;
let client: GoogleGenAI;

beforeAll(async () => {
  deepseek = await startDeepSeek();
  gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${deepseek.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: deepseek-v4-pro, provider: deepseek, model: deepseek-v4-pro }
  - { name: gemini-3-pro-preview, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
    env: { DEEPSEEK_API_KEY: "sk-test", GEMINI_API_KEY: "gemini-test-key" },
  });
  client = new GoogleGenAI({ apiKey: gateway.key, httpOptions: { baseUrl: gateway.url } });
});
afterAll(async () => {
  await gateway?.stop();
  await deepseek?.close();
  await gemini?.close();
});

const WEATHER = {
  functionDeclarations: [
    { name: "weather", description: "The weather in a city", parametersJsonSchema: { type: "object", properties: { location: { type: "string" } } } },
  ],
};
const THOUGHTS = { thinkingConfig: { includeThoughts: true } };

function upstreamCount(model: string): number {
  return model.startsWith("gemini") ? gemini.received.length : deepseek.requests.length;
}

async function collect(stream: AsyncGenerator<GenerateContentResponse>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const chunk of stream) parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
  return parts;
}

describe.each(["deepseek-v4-pro", "gemini-3-pro-preview"])("on %s", (model) => {
  test("generateContent, whole: the answer's text, its thoughts as thought parts, usage", async () => {
    const answer = await client.models.generateContent({ model, contents: "Say hello.", config: THOUGHTS });
    expect(answer.text).toMatch(/Hello/);
    const parts = answer.candidates![0]!.content!.parts!;
    // the DeepSeek emulator reasons on every turn; the Gemini one only before calling a tool
    if (model.startsWith("deepseek")) expect(parts.some((part) => part.thought === true && part.text)).toBe(true);
    expect(answer.candidates![0]!.finishReason).toBe("STOP");
    expect(answer.usageMetadata!.promptTokenCount).toBeGreaterThan(0);
  });

  test("streamGenerateContent: the text streams; without includeThoughts no thought part is sent", async () => {
    const parts = await collect(await client.models.generateContentStream({ model, contents: "Say hello." }));
    expect(parts.map((part) => part.text ?? "").join("")).toMatch(/Hello/);
    expect(parts.some((part) => part.thought)).toBe(false);
  });

  test("countTokens: carrierd's estimate of the request", async () => {
    const counted = await client.models.countTokens({ model, contents: "How many tokens is this sentence of a few words?" });
    expect(counted.totalTokens).toBeGreaterThan(5);
  });

  test.each([true, false])(
    "a two-turn tool loop (stream=%s): the function call's thoughtSignature brings the turn back, every upstream request accepted",
    async (stream) => {
      const before = upstreamCount(model);
      const question: Content = { role: "user", parts: [{ text: `What is the weather in Paris? (${model} ${stream})` }] };
      const config = { ...THOUGHTS, tools: [WEATHER] };
      const parts = stream
        ? await collect(await client.models.generateContentStream({ model, contents: [question], config }))
        : (await client.models.generateContent({ model, contents: [question], config })).candidates![0]!.content!.parts!;
      expect(parts.some((part) => part.thought === true && part.text)).toBe(true);
      const calls = parts.filter((part) => part.functionCall);
      expect(calls.length).toBeGreaterThan(0);
      // a DeepSeek turn's reasoning rides in carrierd's envelope; a Gemini route's client gets Gemini's own signature
      if (model.startsWith("gemini")) expect(calls[0]!.thoughtSignature).not.toMatch(/^cd1\./);
      else expect(calls[0]!.thoughtSignature).toMatch(/^cd1\./);
      // as Gemini CLI resends it: the calls only, the thought parts dropped
      const modelTurn: Content = { role: "model", parts: calls };
      const answers: Content = {
        role: "user",
        parts: calls.map((call) => ({ functionResponse: { name: call.functionCall!.name!, id: call.functionCall!.id, response: { result: "sunny" } } })),
      };
      const second = await client.models.generateContent({ model, contents: [question, modelTurn, answers], config });
      expect(second.text).toMatch(/sunny/);
      expect(upstreamCount(model) - before).toBe(2);
      if (model.startsWith("gemini")) {
        expect(gemini.received.at(-1)!.status).toBe(200);
        expect(gemini.received.at(-1)!.raw.toString()).not.toContain(SKIP);
      } else {
        expect(deepseek.statuses.slice(-2)).toEqual([200, 200]);
        const replayed = deepseek.requests.at(-1)!.messages.find((message) => message.role === "assistant")!;
        expect(typeof replayed.reasoning_content).toBe("string");
      }
    },
  );

  test("a client that drops the thoughtSignature gets the stored turn", async () => {
    const question: Content = { role: "user", parts: [{ text: `Weather in Nice? (${model})` }] };
    const config = { tools: [WEATHER] };
    const first = await client.models.generateContent({ model, contents: [question], config });
    const calls = first.candidates![0]!.content!.parts!.filter((part) => part.functionCall).map((part) => ({ functionCall: part.functionCall }));
    const answers: Content = {
      role: "user",
      parts: calls.map((call) => ({ functionResponse: { name: call.functionCall!.name!, id: call.functionCall!.id, response: { result: "windy" } } })),
    };
    const second = await client.models.generateContent({ model, contents: [question, { role: "model", parts: calls }, answers], config });
    expect(second.text).toMatch(/windy/);
    if (model.startsWith("gemini")) {
      expect(gemini.received.at(-1)!.status).toBe(200);
      expect(gemini.received.at(-1)!.raw.toString()).not.toContain(SKIP);
    } else expect(deepseek.statuses.at(-1)).toBe(200);
  });

  test("the signature alone brings the turn back after its session is removed", async () => {
    const question: Content = { role: "user", parts: [{ text: `Weather in Lyon? (${model})` }] };
    const config = { tools: [WEATHER] };
    const { sdkHttpResponse, candidates } = await client.models.generateContent({ model, contents: [question], config });
    await storageOf(gateway).sessions.remove(sdkHttpResponse!.headers!["x-session-id"]!);
    const calls = candidates![0]!.content!.parts!.filter((part) => part.functionCall);
    const answers: Content = {
      role: "user",
      parts: calls.map((call) => ({ functionResponse: { name: call.functionCall!.name!, id: call.functionCall!.id, response: { result: "rainy" } } })),
    };
    const second = await client.models.generateContent({ model, contents: [question, { role: "model", parts: calls }, answers], config });
    expect(second.text).toMatch(/rainy/);
    if (model.startsWith("gemini")) expect(gemini.received.at(-1)!.raw.toString()).not.toContain(SKIP);
    else expect(deepseek.statuses.at(-1)).toBe(200);
  });
});

describe("the door's edges", () => {
  test("the key in x-goog-api-key (the SDK's way) and in ?key=; errors in Google's shape, those before the handler too", async () => {
    const url = `${gateway.url}/v1beta/models/deepseek-v4-pro:generateContent`;
    const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    const headers = { "content-type": "application/json" };
    const byQuery = await fetch(`${url}?key=${gateway.key}`, { method: "POST", headers, body });
    expect(byQuery.status).toBe(200);
    const missing = await fetch(url, { method: "POST", headers, body });
    expect(missing.status).toBe(401);
    const refusal = (await missing.json()) as { error: { code: number; message: string; status: string } };
    expect(refusal.error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    expect(refusal.error.message).toContain("x-goog-api-key");
    const wrongMethod = await fetch(url, { method: "GET", headers: { "x-goog-api-key": gateway.key } });
    expect(wrongMethod.status).toBe(405);
    expect(((await wrongMethod.json()) as { error: { status: string } }).error.status).toBe("UNIMPLEMENTED");
    const unknown = await fetch(`${gateway.url}/v1beta/models/no-such-model:generateContent`, {
      method: "POST",
      headers: { ...headers, "x-goog-api-key": gateway.key },
      body,
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string; message: string } }).error).toMatchObject({ status: "NOT_FOUND" });
    const bad = await fetch(url, { method: "POST", headers: { ...headers, "x-goog-api-key": gateway.key }, body: JSON.stringify({ contents: [] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
  });

  test("a path no row serves, asked with x-goog-api-key, is a 404, not a 401: the key was sent", async () => {
    const answer = await fetch(`${gateway.url}/v1beta/models/deepseek-v4-pro:embedContent`, { method: "POST", headers: { "x-goog-api-key": gateway.key } });
    expect(answer.status).toBe(404);
    expect((await fetch(`${gateway.url}/v1beta/models/deepseek-v4-pro:embedContent`, { method: "POST" })).status).toBe(401);
  });

  test("the SDK raises a refusal as its ApiError with Google's status", async () => {
    await expect(client.models.generateContent({ model: "no-such-model", contents: "hi" })).rejects.toMatchObject({ status: 404 });
  });

  test("structured output: responseMimeType and responseJsonSchema become the target's JSON-schema mode", async () => {
    const schema = { type: "OBJECT", properties: { score: { type: "INTEGER" } }, required: ["score"] };
    await client.models.generateContent({
      model: "deepseek-v4-pro",
      contents: "Rate this.",
      config: { responseMimeType: "application/json", responseJsonSchema: schema },
    });
    const sent = deepseek.requests.at(-1) as unknown as { response_format: unknown };
    expect(sent.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", schema: { type: "object", properties: { score: { type: "integer" } }, required: ["score"] } },
    });
  });
});
