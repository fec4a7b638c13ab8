import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { QUOTA_ERROR, startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";
import { ask, type Message } from "../../support/stateless-client.js";

/**
 * A chat-completions client through carrierd to the Responses API: a tool
 * conversation over several turns, every upstream request accepted the
 * first time — the emulator refuses a reasoning item whose blob does not
 * verify for the model, one sent by id alone, and a function call sent
 * without the reasoning item it followed.
 */
const KEY = "sk-openai-test";
const TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

let upstream: ResponsesUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY, steps: 2 });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: ${upstream.url}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: gpt-5, provider: openai, model: gpt-5 }
  - { name: o4-mini, provider: openai, model: o4-mini }
  - { name: gpt-5-quota, provider: openai, model: gpt-5-quota }
carriers:
  - match: { plugin: openai-responses }
    fields: []
`,
    env: { OPENAI_API_KEY: KEY },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

type Input = Record<string, unknown>[];
const inputOf = (index: number) => upstream.received[index]!.body!.input as Input;

/** Runs the model's tool loop on `messages` (appending to it); returns the number of upstream requests it took. */
async function toolLoop(
  model: string,
  messages: Message[],
  stream: boolean,
  extra: Record<string, unknown> = {},
): Promise<{ requests: number; reasoning: string[] }> {
  const before = upstream.received.length;
  const reasoning: string[] = [];
  for (let step = 0; step < 6; step++) {
    const turn = await ask(gateway, { model, stream, tools: [TOOL], messages, ...extra });
    expect(turn.error).toBeUndefined();
    expect(turn.status).toBe(200);
    reasoning.push(turn.reasoning);
    messages.push(turn.kept);
    const calls = (turn.kept.tool_calls as { id: string; function: { name: string } }[] | undefined) ?? [];
    if (calls.length === 0) return { requests: upstream.received.length - before, reasoning };
    for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: "20 C" });
  }
  throw new Error("the tool loop did not finish");
}

describe.each([false, true])("stream=%s", (stream) => {
  test("a multi-turn tool conversation: every request accepted first time, each reasoning item replayed before its call", async () => {
    const before = upstream.received.length;
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: `Weather in Paris? (${String(stream)})` },
    ];
    const first = await toolLoop("gpt-5", messages, stream);
    messages.push({ role: "user", content: "And tomorrow?" });
    const second = await toolLoop("gpt-5", messages, stream);
    expect([first.requests, second.requests]).toEqual([3, 3]);
    const sent = upstream.received.slice(before);
    expect(sent.map((request) => request.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const request of sent) {
      expect(request.path).toBe("/v1/responses");
      expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(request.body).toMatchObject({ store: false, include: ["reasoning.encrypted_content"], reasoning: { summary: "auto" } });
      expect(JSON.stringify(request.body)).not.toMatch(/native_record|reasoning_content/);
    }
    // the last request holds the whole conversation: four tool turns, each reasoning item with its blob right before its call
    const input = inputOf(upstream.received.length - 1);
    const calls = input.filter((item) => item.type === "function_call");
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      const previous = input[input.indexOf(call) - 1]!;
      expect(previous.type).toBe("reasoning");
      expect(previous.encrypted_content).toMatch(/^gAAAAA/);
      expect(String(call.id)).toMatch(/^fc_/);
    }
    // the answers' reasoning (text turns) is replayed too, before their message
    expect(input.filter((item) => item.type === "reasoning")).toHaveLength(5);
    expect(input.find((item) => item.type === "message" && item.role === "system")).toEqual({ type: "message", role: "system", content: "Be brief." });
    expect(input.filter((item) => item.type === "function_call_output").every((item) => item.output === "20 C")).toBe(true);
    // summaries reached the chat client as reasoning_content
    expect(first.reasoning[0]).toContain("I should look it up.");
  });

  test("switching model mid-conversation: the new model gets no reasoning item of the old one, and accepts the request", async () => {
    const messages: Message[] = [{ role: "user", content: `Weather in Oslo? (${String(stream)})` }];
    await toolLoop("gpt-5", messages, stream);
    messages.push({ role: "user", content: "Check again." });
    const before = upstream.received.length;
    await toolLoop("o4-mini", messages, stream);
    const switched = upstream.received.slice(before);
    expect(switched.every((request) => request.status === 200)).toBe(true);
    const firstOfO4 = inputOf(before);
    expect(firstOfO4.filter((item) => item.type === "reasoning")).toEqual([]);
    // gpt-5's calls go as plain items (no item id: it would tie them to reasoning this model cannot read)
    for (const item of firstOfO4.filter((entry) => entry.type === "function_call")) expect(item.id).toBeUndefined();
    // o4-mini's own turn is replayed to it with its own blob
    const lastOfO4 = inputOf(upstream.received.length - 1);
    expect(lastOfO4.filter((item) => item.type === "reasoning")).toHaveLength(2);
    // and back on gpt-5, its own items come back
    messages.push({ role: "user", content: "Thanks." });
    const back = upstream.received.length;
    await toolLoop("gpt-5", messages, stream);
    expect(upstream.received.slice(back).every((request) => request.status === 200)).toBe(true);
    // its three turns of the first question (two calls and the answer), none of o4-mini's
    expect(inputOf(back).filter((item) => item.type === "reasoning").length).toBe(3);
  });
});

test("reasoning controls: chat reasoning_effort becomes reasoning.effort; reasoning off asks for no summary", async () => {
  await ask(gateway, { model: "gpt-5", reasoning_effort: "high", messages: [{ role: "user", content: "hi" }] });
  expect(upstream.received.at(-1)!.body!.reasoning).toEqual({ effort: "high", summary: "auto" });
  await ask(gateway, {
    model: "gpt-5",
    reasoning_effort: "minimal",
    model_options: { reasoning: { enabled: false } },
    messages: [{ role: "user", content: "hi" }],
  });
  expect(upstream.received.at(-1)!.body!.reasoning).toEqual({ effort: "minimal" });
  await ask(gateway, { model: "gpt-5", model_options: { reasoning: { summary: "detailed" } }, messages: [{ role: "user", content: "hi" }] });
  expect(upstream.received.at(-1)!.body!.reasoning).toEqual({ summary: "detailed" });
});

test("OpenAI's error passes on with its status and message", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "gpt-5-quota", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(429);
  const body = (await response.json()) as { error: { message: string } };
  expect(body.error.message).toBe(QUOTA_ERROR.error.message);
  expect(upstream.received.at(-1)!.status).toBe(429);
});

test("streamed summaries arrive as delta.reasoning_content before the answer", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "gpt-5", stream: true, messages: [{ role: "user", content: "Say something." }] });
  const text = await response.text();
  const deltas = text
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => (JSON.parse(line.slice(6)) as { choices: { delta: Record<string, string> }[] }).choices[0]?.delta ?? {});
  const reasoning = deltas.map((delta) => delta.reasoning_content ?? "").join("");
  expect(reasoning).toBe("**Answering**\n\nThe result is in.");
  const firstContent = deltas.findIndex((delta) => delta.content);
  const lastReasoning = deltas.findLastIndex((delta) => delta.reasoning_content);
  expect(lastReasoning).toBeLessThan(firstContent);
  expect(deltas.map((delta) => delta.content ?? "").join("")).toBe("Done after 0 tool round(s).");
});
