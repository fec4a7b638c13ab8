import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";

/**
 * A chat completions client on an Anthropic route, held to the table of
 * docs/api.md#a-chat-completions-client-on-an-anthropic-route: the
 * emulator (strict: any key it does not know is refused) records what
 * arrived; the client's answer shows what came back.
 */

const KEY = "sk-ant-test";
const log = captureLog();
let anthropic: AnthropicEmulator;
let gateway: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicEmulator({ apiKey: KEY, cacheUsage: true });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: ${anthropic.url}, api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: claude, provider: anthropic, model: claude-sonnet-4-5 }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: KEY },
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await anthropic?.close();
});

async function chat(body: Record<string, unknown>): Promise<Response> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "claude", ...body }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response;
}

const TOOL = { type: "function", function: { name: "weather", description: "The weather", parameters: { type: "object", properties: {} } } };

/** Every field of the chat wire a client may send, each with a value the table names. */
const EVERY_FIELD = {
  messages: [
    { role: "system", content: "You are terse." },
    {
      role: "user",
      content: [
        { type: "text", text: "Look at this." },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
    { role: "assistant", content: "Seen.", name: "bot" },
    { role: "developer", content: "Answer in French from now on." },
    { role: "user", content: "Well?", name: "ann" },
  ],
  max_completion_tokens: 300,
  temperature: 0.3,
  top_p: 0.9,
  stop: ["</done>"],
  tools: [TOOL],
  tool_choice: "auto",
  parallel_tool_calls: false,
  user: "user-7",
  service_tier: "default",
  top_k: 40,
  seed: 7,
  presence_penalty: 0.5,
  frequency_penalty: 0.5,
  logit_bias: { "50256": -100 },
  logprobs: true,
  top_logprobs: 2,
  n: 1,
  response_format: { type: "json_object" },
  metadata: { purpose: "test" },
  store: false,
  prompt_cache_key: "k-1",
  prompt_cache_retention: "24h",
  web_search_options: {},
  modalities: ["text"],
  verbosity: "low",
  stream_options: null,
};

test("every chat field is passed, mapped or dropped as the table says; a mid-conversation developer message is merged into system in order", async () => {
  await chat(EVERY_FIELD);
  const sent = anthropic.received.at(-1)!;
  expect(sent.status).toBe(200); // the strict emulator took every key it was sent
  expect(sent.body).toEqual({
    model: "claude-sonnet-4-5",
    system: [
      { type: "text", text: "You are terse." },
      { type: "text", text: "Answer in French from now on." },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Look at this." },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Seen." }] },
      { role: "user", content: [{ type: "text", text: "Well?" }] },
    ],
    max_tokens: 300,
    temperature: 0.3,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["</done>"],
    tools: [{ name: "weather", description: "The weather", input_schema: { type: "object", properties: {} } }],
    tool_choice: { type: "auto", disable_parallel_tool_use: true },
    metadata: { user_id: "user-7" },
    service_tier: "standard_only",
  });
  const said = log.lines.filter((line) => line.object.door === "chat_completions" && line.object.route === "claude").map((line) => line.object.field);
  expect(said.sort()).toEqual(
    [
      "seed",
      "presence_penalty",
      "frequency_penalty",
      "logit_bias",
      "logprobs",
      "top_logprobs",
      "n",
      "response_format",
      "metadata",
      "store",
      "prompt_cache_key",
      "prompt_cache_retention",
      "web_search_options",
      "modalities",
      "verbosity",
    ].sort(),
  );
  // said once per route and field, however often it comes
  await chat(EVERY_FIELD);
  expect(log.lines.filter((line) => line.object.door === "chat_completions" && line.object.field === "seed")).toHaveLength(1);
});

test("safety_identifier names the user when `user` is absent; a tier Anthropic has no word for is not sent", async () => {
  await chat({ messages: [{ role: "user", content: "hi" }], safety_identifier: "safe-1", service_tier: "flex" });
  const sent = anthropic.received.at(-1)!.body!;
  expect(sent.metadata).toEqual({ user_id: "safe-1" });
  expect(sent).not.toHaveProperty("service_tier");
  await chat({ messages: [{ role: "user", content: "hi" }], service_tier: "auto" });
  expect(anthropic.received.at(-1)!.body!.service_tier).toBe("auto");
});

test("the stop sequence Anthropic names comes back as the choice's stop_reason, whole and streamed", async () => {
  const ask = { messages: [{ role: "user", content: "hi" }], stop: ["xyz", "llo"] };
  const whole = (await (await chat(ask)).json()) as { choices: { message: { content: string }; finish_reason: string; stop_reason?: string }[] };
  expect(whole.choices[0]).toMatchObject({ message: { content: "He" }, finish_reason: "stop", stop_reason: "llo" });
  const streamed = await readSse(await chat({ ...ask, stream: true }));
  const last = streamed.events.findLast((event) => (event as { choices: unknown[] }).choices.length > 0) as { choices: object[] };
  expect(last.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: "llo" });
  // an answer that simply ended names no sequence
  const plain = (await (await chat({ messages: [{ role: "user", content: "hi" }] })).json()) as { choices: object[] };
  expect(plain.choices[0]).not.toHaveProperty("stop_reason");
});

test("usage.service_tier comes back as service_tier; cache reads and writes as their own counts, not folded into one", async () => {
  const expected = {
    prompt_tokens: 42 + 1200 + 3400,
    completion_tokens: 17,
    total_tokens: 42 + 1200 + 3400 + 17,
    prompt_tokens_details: { cached_tokens: 3400, cache_write_tokens: 1200 },
  };
  const whole = (await (await chat({ messages: [{ role: "user", content: "hi" }] })).json()) as Record<string, unknown>;
  expect(whole).toMatchObject({ service_tier: "default", usage: expected });
  expect(whole).not.toHaveProperty("system_fingerprint"); // Anthropic gives none
  const streamed = await readSse(await chat({ messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } }));
  const usage = streamed.events.at(-1) as Record<string, unknown>;
  expect(usage).toMatchObject({ service_tier: "default", choices: [], usage: expected });
  const finish = streamed.events.at(-2) as Record<string, unknown>;
  expect(finish).toMatchObject({ service_tier: "default", choices: [{ finish_reason: "stop" }] });
});
