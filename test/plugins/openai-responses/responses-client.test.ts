import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type Item } from "../../support/codex-client.js";
import { readSse, startTestGateway, storageOf, type TestGateway } from "../../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";

/**
 * A stateless Responses client (Codex: `store: false`, its whole history as
 * `input`, reasoning items resent with carrierd's envelope) through carrierd
 * to the Responses API. OpenAI's blob never reaches the client: carrierd
 * seals it in its envelope, and hands it back to the same model verbatim —
 * from the store, or from the envelope once the session is removed.
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
  test("the tool loop is accepted on the first try, each blob back before its call, none shown to the client", async () => {
    const before = upstream.received.length;
    const input: Item[] = [...CODEX_PREAMBLE, userMessage(`Weather in Florence? (${String(stream)} ${session})`)];
    for (let turn = 0; turn < 3; turn++) {
      const answered = await codexTurn(gateway, "gpt-5-codex", input, stream);
      expect(answered.status).toBe(200);
      if (session === "removed") await storageOf(gateway).sessions.remove(answered.sessionId!);
      const reasoning = answered.done.filter((entry) => entry.type === "reasoning");
      // streamed, the reasoning went out sealed as it ended, the upstream's blob (which comes at its item's end) in one more item after the output
      if (stream) expect(answered.done.at(-1)).toMatchObject({ type: "reasoning", summary: [], encrypted_content: expect.stringMatching(/^cd1\./) as string });
      for (const item of stream ? reasoning.slice(0, -1) : reasoning) {
        expect(String(item.encrypted_content)).not.toMatch(/^gAAAAA/); // carrierd's envelope, never the upstream's blob
        expect(item.summary).toEqual([
          { type: "summary_text", text: turn < 2 ? "**Choosing a tool**\n\nI should look it up." : "**Answering**\n\nThe result is in." },
        ]);
      }
      input.push(...kept(answered.done, "as codex"), ...toolOutputs(answered.done));
    }
    const sent = upstream.received.slice(before);
    expect(sent.map((request) => request.status)).toEqual([200, 200, 200]);
    const last = sent.at(-1)!.body as { input: Item[]; reasoning: unknown; store: boolean };
    expect(last.store).toBe(false);
    expect(last.reasoning).toEqual({ summary: "auto" });
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
