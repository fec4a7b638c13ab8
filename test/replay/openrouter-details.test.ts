import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadRoutesFile } from "../../src/routing/routes/load-routes.js";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { canonical, ROUTER_FORMATS as FORMATS, startOpenAIUpstream, type ChatBody, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";

/**
 * OpenRouter's `reasoning_details` types through the shipped OpenRouter route
 * (docs/routes.md#the-shipped-table-and-why-each-route-exists): Claude's signed
 * `reasoning.text`, OpenAI's `reasoning.summary` + `reasoning.encrypted` under
 * one index, Gemini's `reasoning.encrypted` per tool call (its `id` the call's
 * id), each with its `format`. carrierd stores each turn's array verbatim and
 * sends it back on the message it came with, to the same model family only
 * (docs/sessions-and-replay.md#replay-rules, rule 7), for a client that keeps
 * none of it. The upstream is the OpenAI chat emulator's `openrouter` flavour,
 * which answers in the model family's shape.
 */
let router: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  const loaded = await loadRoutesFile(fileURLToPath(new URL("../../routes.yaml", import.meta.url)), {
    knownPlugins: new Set(["demo", "openai-compatible", "openai-responses", "anthropic", "gemini", "bedrock", "copilot"]),
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const shipped = loaded.table.policyFor(
    { id: "openrouter", plugin: "openai-compatible", baseUrl: "https://openrouter.ai/api/v1", host: "openrouter.ai", headers: {} },
    "x",
  );
  expect(shipped.fields).toEqual(["reasoning_content", "reasoning", "reasoning_details"]);
  router = await startOpenAIUpstream();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openrouter: { plugin: openai-compatible, base_url: "${router.baseUrl("openrouter")}" }
models:
  - { name: "openrouter/*", provider: openrouter }
carriers:
  - match: { provider: openrouter }
    fields: ${JSON.stringify(shipped.fields)}
`,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await router?.close();
});

const MODELS = { anthropic: "anthropic/claude-sonnet-4.5", openai: "openai/gpt-5", google: "google/gemini-3-pro-preview" };

/** One question as a tool loop on `model`; the statuses of its turns. */
async function loop(messages: Message[], model: string, stream: boolean, question: string): Promise<number[]> {
  messages.push({ role: "user", content: question });
  const statuses: number[] = [];
  for (let step = 0; step < 3; step++) {
    const turn = await ask(gateway, { model: `openrouter/${model}`, stream, tools: [WEATHER_TOOL], messages });
    statuses.push(turn.status);
    if (turn.status !== 200) return statuses;
    messages.push(turn.kept);
    const calls = (turn.kept.tool_calls as { id: string }[] | undefined) ?? [];
    if (calls.length === 0) return statuses;
    for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: "20 C" });
  }
  return statuses;
}

/** The `format` of every detail on a request's assistant messages. */
function formatsOf(body: ChatBody): unknown[] {
  return body.messages.flatMap((message) =>
    Array.isArray(message.reasoning_details) ? (message.reasoning_details as { format: unknown }[]).map((detail) => detail.format) : [],
  );
}

/** The issued array a sent assistant message stands for. */
function issuedFor(message: Record<string, unknown>) {
  const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
  return router.issuedFor(calls.length > 0 ? calls[0]!.id : `text:${String(message.content)}`)?.details;
}

describe.each([false, true])("stream=%s", (stream) => {
  test.each(Object.entries(MODELS))(
    "%s: each turn's details go back verbatim on their own message, every request accepted first time",
    async (family, model) => {
      const before = router.received.length;
      const messages: Message[] = [];
      expect([...(await loop(messages, model, stream, "Weather?")), ...(await loop(messages, model, stream, "And tomorrow?"))]).toEqual([200, 200, 200, 200]);
      const last = router.received.at(-1)!.body;
      const assistants = last.messages.filter((message) => message.role === "assistant");
      expect(assistants).toHaveLength(3);
      for (const message of assistants) {
        const issued = issuedFor(message)!;
        expect(canonical(message.reasoning_details)).toBe(canonical(issued));
        expect(issued.every((detail) => detail.format === FORMATS[family as keyof typeof FORMATS])).toBe(true);
      }
      if (family === "google") {
        // one signature per call, each under its tool call's id, on the message that made the calls
        const calls = assistants[0]!.tool_calls as { id: string }[];
        const encrypted = (assistants[0]!.reasoning_details as { type: string; id?: string }[]).filter((detail) => detail.type === "reasoning.encrypted");
        expect(encrypted.map((detail) => detail.id)).toEqual(calls.map((call) => call.id));
      }
      expect(router.received.slice(before).every((request) => request.status === 200)).toBe(true);
    },
  );
});

test("switching families on one conversation: no request carries another family's details, every request accepted first time", async () => {
  const before = router.received.length;
  const messages: Message[] = [];
  const order = ["anthropic", "google", "openai", "anthropic"] as const;
  for (const [i, family] of order.entries()) expect(await loop(messages, MODELS[family], i % 2 === 1, `Question ${i}?`)).toEqual([200, 200]);
  const requests = router.received.slice(before);
  expect(requests).toHaveLength(8);
  for (const request of requests) {
    expect(request.status).toBe(200);
    const family = request.body.model.split("/")[0] as keyof typeof FORMATS;
    const formats = formatsOf(request.body);
    expect({ model: request.body.model, formats }).toEqual({
      model: request.body.model,
      formats: formats.filter((format) => format === FORMATS[family]),
    });
  }
  // Claude's first turns reach Claude again at the end, signed and verbatim; the others' plain text may cross, never their blobs
  const last = requests.at(-1)!.body;
  const claudeFirst = last.messages.find((message) => message.role === "assistant")!;
  expect(canonical(claudeFirst.reasoning_details)).toBe(canonical(issuedFor(claudeFirst)));
  expect(JSON.stringify(last)).not.toContain("gAAAAB");
  expect(JSON.stringify(last)).not.toContain("CiQB");
});
