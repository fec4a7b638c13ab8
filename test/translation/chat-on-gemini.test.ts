import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";

/**
 * A chat completions client on a Gemini route, held to the table of
 * docs/api.md#a-chat-completions-client-on-a-gemini-route: the emulator
 * (strict: an unknown field is Google's "Cannot find field") records what
 * arrived; the client's answer shows what came back.
 */

const KEY = "gemini-test-key";
const log = captureLog();
let gemini: Emulator;
let gateway: TestGateway;

beforeAll(async () => {
  gemini = await startGeminiEmulator({ apiKey: KEY });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: g, provider: gemini, model: gemini-3-flash-preview }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { GEMINI_API_KEY: KEY },
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await gemini?.close();
});

async function chat(body: Record<string, unknown>): Promise<Response> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "g", ...body }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response;
}

const TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "The weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, additionalProperties: false },
  },
};

/** Every field of the chat wire a client may send, each with a value the table names. */
const EVERY_FIELD = {
  messages: [
    { role: "system", content: "You are terse." },
    {
      role: "user",
      content: [
        { type: "text", text: "Read these." },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
      ],
    },
    { role: "assistant", content: "Read." },
    { role: "developer", content: "Answer in French from now on." },
    { role: "user", content: "Well?" },
  ],
  max_completion_tokens: 300,
  temperature: 0.3,
  top_p: 0.9,
  seed: 7,
  presence_penalty: 0.5,
  frequency_penalty: 0.25,
  stop: "</done>",
  response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } },
  reasoning_effort: "low",
  tools: [TOOL],
  tool_choice: "required",
  parallel_tool_calls: false,
  user: "user-7",
  service_tier: "default",
  logit_bias: { "50256": -100 },
  logprobs: true,
  top_logprobs: 2,
  n: 1,
  metadata: { purpose: "test" },
  store: false,
  safety_identifier: "safe-1",
  prompt_cache_key: "k-1",
  prompt_cache_retention: "24h",
  web_search_options: {},
  safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
};

test("every chat field is passed, mapped or dropped as the table says; a mid-conversation developer message is merged into systemInstruction in order", async () => {
  await chat(EVERY_FIELD);
  const sent = gemini.received.at(-1)!;
  expect(sent.status).toBe(200); // the strict emulator took every field it was sent
  expect(sent.body).toEqual({
    systemInstruction: { role: "user", parts: [{ text: "You are terse." }, { text: "Answer in French from now on." }] },
    contents: [
      {
        role: "user",
        parts: [
          { text: "Read these." },
          { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
        ],
      },
      { role: "model", parts: [{ text: "Read." }] },
      { role: "user", parts: [{ text: "Well?" }] },
    ],
    generationConfig: {
      maxOutputTokens: 300,
      temperature: 0.3,
      topP: 0.9,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      stopSequences: ["</done>"],
      responseMimeType: "application/json",
      responseJsonSchema: { type: "object" },
      responseLogprobs: true,
      logprobs: 2,
      thinkingConfig: { thinkingLevel: "LOW", includeThoughts: true },
    },
    toolConfig: { functionCallingConfig: { mode: "ANY" } },
    tools: [
      { functionDeclarations: [{ name: "weather", description: "The weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] },
    ],
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
  });
  const said = log.lines.filter((line) => line.object.door === "chat_completions" && line.object.route === "g").map((line) => line.object.field);
  expect(said.sort()).toEqual(
    [
      "parallel_tool_calls",
      "user",
      "service_tier",
      "logit_bias",
      "n",
      "metadata",
      "store",
      "safety_identifier",
      "prompt_cache_key",
      "prompt_cache_retention",
      "web_search_options",
    ].sort(),
  );
});

test("the answer: thought summaries as reasoning_content, usage with reasoning tokens, nothing Gemini does not give", async () => {
  const whole = (await (await chat({ messages: [{ role: "user", content: "hi" }] })).json()) as Record<string, unknown>;
  expect(whole).toMatchObject({
    object: "chat.completion",
    model: "g",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello." }, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: 20, completion_tokens: 20, total_tokens: 40, completion_tokens_details: { reasoning_tokens: 12 } },
  });
  for (const absent of ["service_tier", "system_fingerprint"]) expect(whole).not.toHaveProperty(absent);
  const streamed = await readSse(await chat({ messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } }));
  expect(streamed.done).toBe(true);
  expect(streamed.events.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 20, completion_tokens_details: { reasoning_tokens: 12 } } });
});

test("logprobs asked for come back in OpenAI's shape, whole and streamed", async () => {
  const bytes = (token: string) => [...Buffer.from(token, "utf8")];
  const expected = {
    content: [
      {
        token: "Hello.",
        logprob: -0.25,
        bytes: bytes("Hello."),
        top_logprobs: [
          { token: "Hello.", logprob: -0.25, bytes: bytes("Hello.") },
          { token: " else", logprob: -3.5, bytes: bytes(" else") },
        ],
      },
    ],
  };
  const ask = { messages: [{ role: "user", content: "hi" }], logprobs: true, top_logprobs: 2 };
  const whole = (await (await chat(ask)).json()) as { choices: { logprobs: unknown }[] };
  expect(whole.choices[0]!.logprobs).toEqual(expected);
  const streamed = await readSse(await chat({ ...ask, stream: true }));
  const content = streamed.events.flatMap((event) => (event as { choices: { logprobs: { content: unknown[] } | null }[] }).choices[0]?.logprobs?.content ?? []);
  expect(content).toEqual(expected.content);
  // not asked, none: Gemini is not asked either
  await chat({ messages: [{ role: "user", content: "hi" }] });
  expect(gemini.received.at(-1)!.body).not.toHaveProperty("generationConfig.responseLogprobs");
});
