import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadRoutesFile } from "../../src/routing/routes/load-routes.js";
import { captureLog } from "../support/captured-log.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ask, type Message } from "../support/stateless-client.js";
import { signCall, SKIP_THOUGHT_SIGNATURE as SKIP, startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * Gemini 3 through Google's OpenAI-compatible endpoint: the thought
 * signature on each tool call's `extra_content` is stored and sent back on
 * the same call, so a client that keeps none of it runs a tool loop the
 * endpoint accepts on the first try at every step.
 */
const KEY = "gemini-key-1";
const MODEL = "gemini-openai/gemini-3-pro-preview";
const weather = {
  type: "function",
  function: {
    name: "weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

type Call = { id: string; function: { name: string; arguments: string }; extra_content?: { google?: { thought_signature?: string } } };
type UpstreamMessage = { role: string; tool_calls?: Call[] } & Record<string, unknown>;

let upstream: OpenAIUpstream;
let gateway: TestGateway;
const log = captureLog();
beforeAll(async () => {
  upstream = await startOpenAIUpstream({ apiKeys: { gemini: KEY }, answers: { kind: "steps", steps: 3 } });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  gemini-openai: { plugin: openai-compatible, base_url: ${upstream.baseUrl("gemini")}, api_key_env: CARRIERD_TEST_GEMINI_KEY }
models:
  - { name: "gemini-openai/*", provider: gemini-openai }
carriers:
  - match: { provider: gemini-openai }
    fields: [extra_content]
`,
    env: { CARRIERD_TEST_GEMINI_KEY: KEY },
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** A stateless client's tool loop: each answer kept without extra_content (the upstream's answer passes it, the client does not keep it), each call answered. */
async function toolLoop(stream: boolean, question: string) {
  const messages: Message[] = [{ role: "user", content: question }];
  const sent = upstream.received.length;
  for (let step = 0; step < 10; step++) {
    const turn = await ask(gateway, { model: MODEL, stream, tools: [weather], messages });
    expect(turn.error).toBeUndefined();
    expect(turn.status).toBe(200);
    messages.push(turn.kept);
    const calls = (turn.kept.tool_calls as Call[] | undefined) ?? [];
    if (calls.length === 0) return { messages, received: upstream.received.slice(sent) };
    for (const call of calls) {
      delete call.extra_content;
      messages.push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: "21 C" });
    }
  }
  throw new Error("the tool loop did not end");
}

describe.each([false, true])("stream=%s", (stream) => {
  test("a multi-step tool loop through a stateless client is accepted on the first try at every step", async () => {
    const { messages, received } = await toolLoop(stream, `Weather in Rome and Oslo, then more (${String(stream)})?`);
    expect(messages.at(-1)!.content).toBe("Done after 3 steps.");
    // one request per step, each accepted: nothing was refused and resent
    expect(received.map((request) => request.status)).toEqual([200, 200, 200, 200]);
    const last = received.at(-1)!.body!.messages as UpstreamMessage[];
    const steps = last.filter((message) => message.role === "assistant");
    expect(steps).toHaveLength(3);
    for (const step of steps) {
      const [first, ...rest] = step.tool_calls!;
      // the first call of each step carries the signature the server issued for exactly that call
      expect(first!.extra_content).toEqual({ google: { thought_signature: signCall(first!.function.name, first!.function.arguments) } });
      // a call the server did not sign (the second of two parallel calls) gets nothing
      for (const call of rest) expect(call).not.toHaveProperty("extra_content");
    }
    // the endpoint refuses unknown message fields: none ever went
    for (const request of received) {
      const text = JSON.stringify(request.body);
      expect(text).not.toContain("reasoning_content");
      expect(text).not.toContain("native_record");
      expect(text).not.toContain(SKIP);
    }
  });
});

test("a request that opts out of extra_content (model_options.replay.omit) gets no stored signature, and Google's refusal reaches the client", async () => {
  const user = { role: "user", content: "Weather in Rome and Oslo (opt-out)?" };
  const first = await ask(gateway, { model: MODEL, tools: [weather], messages: [user] });
  expect(first.status).toBe(200);
  const calls = first.kept.tool_calls as Call[];
  const results = calls.map((call) => ({ role: "tool", tool_call_id: call.id, name: call.function.name, content: "21 C" }));
  const second = await ask(gateway, {
    model: MODEL,
    tools: [weather],
    model_options: { replay: { omit: ["extra_content"] } },
    messages: [user, first.kept, ...results],
  });
  expect(second.status).toBe(400);
  expect(second.error?.message).toContain("Function call is missing a thought_signature in functionCall parts.");
  expect(JSON.stringify(upstream.received.at(-1)!.body)).not.toContain("extra_content");
});

test("history from another model: the first call of each unsigned step gets the documented skip value, with a debug line", async () => {
  const lines = log.lines.length;
  const foreign = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_a1", type: "function", function: { name: "weather", arguments: '{"location":"Lima"}' } }],
  };
  const turn = await ask(gateway, {
    model: MODEL,
    tools: [weather],
    messages: [{ role: "user", content: "Lima?" }, foreign, { role: "tool", tool_call_id: "call_a1", name: "weather", content: "18 C" }],
  });
  expect(turn.status).toBe(200);
  const sent = (upstream.received.at(-1)!.body!.messages as UpstreamMessage[])[1]!;
  expect(sent.tool_calls![0]!.extra_content).toEqual({ google: { thought_signature: SKIP } });
  const debug = log.lines.slice(lines).find((line) => line.level === "debug" && line.message.includes("skip value"));
  expect(debug?.object).toMatchObject({ model: "gemini-3-pro-preview", function: "weather", signature: SKIP });
});

test("a signature the client kept itself is sent as it is; the endpoint's own refusal text reaches the client for a forged one", async () => {
  const args = '{"location":"Quito"}';
  const kept = (signature: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_q1", type: "function", function: { name: "weather", arguments: args }, extra_content: { google: { thought_signature: signature } } },
    ],
  });
  const history = (signature: string) => [
    { role: "user", content: "Quito?" },
    kept(signature),
    { role: "tool", tool_call_id: "call_q1", name: "weather", content: "14 C" },
  ];
  const good = await ask(gateway, { model: MODEL, tools: [weather], messages: history(signCall("weather", args)) });
  expect(good.status).toBe(200);
  const forged = await ask(gateway, { model: MODEL, tools: [weather], messages: history("Zm9yZ2Vk") });
  expect(forged.status).toBe(400);
  expect(forged.error?.message).toContain("Corrupted thought signature.");
});

test("without carrierd's record or the skip value the endpoint refuses with Google's text (the emulator is strict)", async () => {
  const response = await fetch(`${upstream.baseUrl("gemini")}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gemini-3-pro-preview",
      messages: [
        { role: "user", content: "Lima?" },
        {
          role: "assistant",
          content: null,
          reasoning_content: "x",
          tool_calls: [{ id: "c", type: "function", function: { name: "weather", arguments: "{}" } }],
        },
      ],
    }),
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual([
    {
      error: {
        code: 400,
        message: `Invalid JSON payload received. Unknown name "reasoning_content" at 'messages[1]': Cannot find field.`,
        status: "INVALID_ARGUMENT",
      },
    },
  ]);
  const unsigned = await fetch(`${upstream.baseUrl("gemini")}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gemini-3-pro-preview",
      messages: [
        { role: "user", content: "Lima?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "weather", arguments: "{}" } }] },
      ],
    }),
  });
  const [{ error }] = (await unsigned.json()) as [{ error: { message: string } }];
  expect(error.message).toBe(
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:weather` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
  );
});

test("the shipped routes.yaml sends Google's OpenAI-compatible host extra_content and nothing else", async () => {
  const loaded = await loadRoutesFile(fileURLToPath(new URL("../../routes.yaml", import.meta.url)), {
    knownPlugins: new Set(["demo", "openai-compatible", "openai-responses", "anthropic", "gemini", "bedrock", "copilot"]),
  });
  expect(loaded.ok).toBe(true);
  if (!loaded.ok) return;
  const resolved = loaded.table.resolveModel(MODEL)!;
  expect(resolved.provider.baseUrl).toBe("https://generativelanguage.googleapis.com/v1beta/openai");
  expect(loaded.table.policyFor(resolved.provider, resolved.upstreamModel).fields).toEqual(["extra_content"]);
});
