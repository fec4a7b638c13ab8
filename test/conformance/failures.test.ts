import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";
import OpenAI from "openai";
import { afterEach, afterAll, beforeAll, expect, test } from "vitest";
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

const DROP = { model: "deepseek-reasoner", input: "FAIL_MID_STREAM now" };

test("openai SDK: an upstream that drops mid-stream rejects chat and responses streams with an APIError", async () => {
  const chat = await client.chat.completions.create({ model: DROP.model, stream: true, messages: [{ role: "user", content: DROP.input }] });
  await expect(async () => {
    for await (const _chunk of chat) {
      // reasoning chunks arrive first, then the error chunk
    }
  }).rejects.toMatchObject({ name: "Error", message: expect.stringMatching(/upstream/) });

  await expect(client.responses.stream(DROP).finalResponse()).rejects.toThrow(/upstream/);
});

test("openai SDK: an upstream 400 before the stream is an APIError with the upstream's status and message", async () => {
  await expect(client.responses.create({ model: "deepseek-reasoner", input: "FAIL_400", stream: true })).rejects.toMatchObject({
    status: 400,
    message: expect.stringMatching(/reasoning_content/),
  });
  await expect(client.chat.completions.create({ model: "deepseek-reasoner", messages: [{ role: "user", content: "FAIL_400" }] })).rejects.toMatchObject({
    status: 400,
  });
});

test("Vercel AI SDK: both providers surface a mid-stream failure as an error part", async () => {
  const compatible = createOpenAICompatible({ name: "carrierd", baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key });
  const openai = createOpenAI({ baseURL: `${setup.gateway.url}/v1`, apiKey: setup.gateway.key });
  for (const model of [compatible.chatModel(DROP.model), openai.responses(DROP.model)]) {
    const result = streamText({ model, prompt: DROP.input, onError: () => {} });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(types).toContain("error");
    expect(types).toContain("reasoning-delta"); // what arrived before the drop still reached the client
  }
});

test("an upstream 400 still names the session in X-Session-Id, on both APIs", async () => {
  for (const [path, body] of [
    ["/v1/responses", { model: "deepseek-reasoner", input: "FAIL_400" }],
    ["/v1/chat/completions", { model: "deepseek-reasoner", messages: [{ role: "user", content: "FAIL_400" }] }],
  ] as const) {
    const response = await setup.gateway.post(path, body, { "x-session-id": "failing-session-1" });
    expect(response.status).toBe(400);
    expect(response.headers.get("x-session-id")).toBe("failing-session-1");
  }
});
