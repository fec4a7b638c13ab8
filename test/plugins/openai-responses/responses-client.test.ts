import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type Item } from "../../support/codex-client.js";
import { readSse, startTestGateway, storageOf, type TestGateway } from "../../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";

/**
 * A stateless Responses client (Codex: `store: false`, its whole history as
 * `input`, `include: ["reasoning.encrypted_content"]`) through carrierd to
 * the Responses API, carried (docs/api.md#carried-requests): the client gets
 * the upstream's reasoning items as the upstream sent them, its own blobs
 * in them, and sends them back; the upstream receives them as the client
 * sent them, whether or not carrierd still holds the session.
 */
const KEY = "sk-openai-test";
let upstream: ResponsesUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY, steps: 2 });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: ${upstream.url}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: gpt-5-codex, provider: openai, model: gpt-5-codex }
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

describe.each([
  [false, "kept"],
  [true, "kept"],
  [false, "removed"],
  [true, "removed"],
] as const)("stream=%s, session %s before each request", (stream, session) => {
  test("the tool loop is accepted on the first try, each blob the upstream's, back before its call as the client kept it", async () => {
    const before = upstream.received.length;
    const input: Item[] = [...CODEX_PREAMBLE, userMessage(`Weather in Florence? (${String(stream)} ${session})`)];
    let asked: Item[] = [];
    for (let turn = 0; turn < 3; turn++) {
      asked = [...input];
      const answered = await codexTurn(gateway, "gpt-5-codex", input, stream);
      expect(answered.status).toBe(200);
      if (session === "removed") await storageOf(gateway).sessions.remove(answered.sessionId!);
      // the upstream's items as it sent them: its blob in each reasoning item, no item of carrierd's after the output
      const reasoning = answered.done.filter((entry) => entry.type === "reasoning");
      expect(reasoning).toHaveLength(1);
      expect(answered.done.at(-1)!.type).not.toBe("reasoning");
      expect(String(reasoning[0]!.encrypted_content)).toMatch(/^gAAAAA/);
      expect(reasoning[0]!.summary).toEqual([
        { type: "summary_text", text: turn < 2 ? "**Choosing a tool**\n\nI should look it up." : "**Answering**\n\nThe result is in." },
      ]);
      expect(answered.output).toEqual(answered.done);
      input.push(...kept(answered.done, "as codex"), ...toolOutputs(answered.done));
    }
    const sent = upstream.received.slice(before);
    expect(sent.map((request) => request.status)).toEqual([200, 200, 200]);
    const last = sent.at(-1)!.body as { input: Item[]; reasoning: unknown; store: boolean };
    expect(last.store).toBe(false);
    // the client's own reasoning settings, as it sent them
    expect(last.reasoning).toEqual({ summary: "auto" });
    expect(last.input).toEqual(asked);
    const calls = last.input.filter((item) => item.type === "function_call");
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      const previous = last.input[last.input.indexOf(call) - 1]!;
      expect(previous).toMatchObject({ type: "reasoning", encrypted_content: expect.stringMatching(/^gAAAAA/) });
    }
  });
});

test("a Responses client's reasoning settings reach the upstream, and its summaries come back as reasoning summary events", async () => {
  const response = await gateway.post("/v1/responses", {
    model: "gpt-5-codex",
    stream: true,
    store: false,
    reasoning: { effort: "low", summary: "detailed" },
    input: "hi",
  });
  const { events } = await readSse(response);
  expect(upstream.received.at(-1)!.body!.reasoning).toEqual({ effort: "low", summary: "detailed" });
  const summary = (events as { type: string; delta?: string }[])
    .filter((event) => event.type === "response.reasoning_summary_text.delta")
    .map((event) => event.delta)
    .join("");
  expect(summary).toBe("**Answering**\n\nThe result is in.");
});
