import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { Hold } from "../support/hold.js";
import { lateCarriers, startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * No door holds answer text back: against an upstream that streams its
 * reasoning and text, then waits on a gate before its late carriers
 * (`reasoning_details`) and its finish (the OpenAI chat emulator's
 * `late-carriers` answers behind a closed `Hold`), every door's client sees its first
 * text delta while the upstream still waits (the gate opens only once the
 * client has seen it). The late carriers still reach a client that hands
 * back an envelope (the Messages API's last thinking block, the Responses
 * API's last reasoning item), and replay from it is exact: with the
 * session removed from the store, the next request takes them upstream.
 */

let upstream: OpenAIUpstream;
let gateway: TestGateway;
/** Closed before every answer: each waits at it after its text until the client has seen that text. */
const gate = new Hold();

beforeAll(async () => {
  gate.hold();
  upstream = await startOpenAIUpstream({ answers: { kind: "late-carriers" }, hold: gate });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  router: { plugin: openai-compatible, base_url: "${upstream.baseUrl("router")}", api_key_env: ROUTER_KEY }
models:
  - { name: late-carriers, provider: router, model: google/gemini-3-pro }
carriers:
  - match: { provider: router }
    fields: [reasoning_content, reasoning_details]
`,
    env: { ROUTER_KEY: "sk-emulated" },
  });
});
afterAll(async () => {
  gate.release();
  await upstream?.close(); // first: an answer a door held would keep the gateway waiting on it
  await gateway?.stop();
});

/** An SSE frame: its event name (when it has one) and its data. */
interface Frame {
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * Reads a stream frame by frame; once a frame holds `firstText` (the door's
 * first text delta) it notes whether the upstream was still at its gate, and
 * opens the gate. A door that held the text would leave the gate shut: the
 * upstream never finishes and the test's own time limit ends it.
 */
async function readLive(response: Response, isFirstText: (frame: Frame) => boolean): Promise<{ frames: Frame[]; textWhileUpstreamWaited: boolean }> {
  expect(response.status).toBe(200);
  let atGate = false;
  void gate.reached().then(() => (atGate = true));
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const frames: Frame[] = [];
  let buffer = "";
  let textWhileUpstreamWaited: boolean | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      const frame = { event, data };
      frames.push(frame);
      if (textWhileUpstreamWaited === undefined && isFirstText(frame)) {
        await gate.reached(); // the upstream sent its text before its gate: it is there now, or about to be
        textWhileUpstreamWaited = atGate;
        gate.release();
        gate.hold(); // shut again for the next answer
      }
    }
  }
  expect(textWhileUpstreamWaited, "the client saw no text delta").toBeDefined();
  return { frames, textWhileUpstreamWaited: textWhileUpstreamWaited! };
}

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.key}`, "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
}

/** The last request's assistant message, as the upstream received it. */
function lastAssistant(): Record<string, unknown> {
  return upstream.received.at(-1)!.body.messages.findLast((message) => message.role === "assistant")!;
}

async function forgetSession(response: Response): Promise<void> {
  await storageOf(gateway).sessions.remove(response.headers.get("x-session-id")!);
}

test("chat completions: the first text delta leaves while the upstream still waits", async () => {
  const response = await post("/v1/chat/completions", { model: "late-carriers", stream: true, messages: [{ role: "user", content: "hi" }] });
  const { textWhileUpstreamWaited } = await readLive(response, (frame) => frame.data.includes('"content":"Answer'));
  expect(textWhileUpstreamWaited).toBe(true);
});

describe.each([
  ["without include", []],
  ["with include: reasoning.encrypted_content, store: false", ["reasoning.encrypted_content"]],
] as const)("Responses, %s", (_label, include) => {
  test("the first output_text.delta leaves while the upstream still waits; late carriers come in a last reasoning item, and replay from it is exact", async () => {
    const input: Record<string, unknown>[] = [{ type: "message", role: "user", content: "hi" }];
    const response = await post("/v1/responses", { model: "late-carriers", stream: true, store: false, include, input });
    const { frames, textWhileUpstreamWaited } = await readLive(response, (frame) => frame.event === "response.output_text.delta");
    expect(textWhileUpstreamWaited).toBe(true);
    const done = frames
      .filter((frame) => frame.event === "response.output_item.done")
      .map((frame) => (JSON.parse(frame.data) as { item: Record<string, unknown> }).item);
    if (include.length === 0) {
      expect(done.map((item) => item.type)).toEqual(["reasoning", "message"]);
      expect(done.some((item) => "encrypted_content" in item)).toBe(false);
      return;
    }
    // the reasoning item, sealed as it ended; the text; then the whole turn's envelope, once the late carriers came
    expect(done.map((item) => item.type)).toEqual(["reasoning", "message", "reasoning"]);
    expect(done[0]!.encrypted_content).toMatch(/^cd1\./);
    expect(done[2]).toMatchObject({ summary: [], encrypted_content: expect.stringMatching(/^cd1\./) as string });
    const completed = JSON.parse(frames.find((frame) => frame.event === "response.completed")!.data) as { response: { output: unknown[] } };
    expect(completed.response.output).toEqual(done);
    // Codex resends the items it was given; the store has forgotten the turn: the envelope alone brings the late carriers back
    const n = upstream.received.length;
    await forgetSession(response);
    const next = await post("/v1/responses", {
      model: "late-carriers",
      stream: true,
      store: false,
      include,
      input: [...input, ...done, { type: "message", role: "user", content: "and then?" }],
    });
    await readLive(next, (frame) => frame.event === "response.output_text.delta");
    expect(lastAssistant()).toMatchObject({
      content: `Answer ${n} is here.`,
      reasoning_content: `Thinking ${n}, step by step.`,
      reasoning_details: lateCarriers(n),
    });
    expect(upstream.received.at(-1)!.body.messages.filter((message) => message.role === "assistant")).toHaveLength(1);
  });
});

test("Messages: the first text_delta leaves while the upstream still waits; late carriers come in a last thinking block, and replay from it is exact", async () => {
  const messages: Record<string, unknown>[] = [{ role: "user", content: "hi" }];
  const response = await post("/v1/messages", { model: "late-carriers", max_tokens: 1024, stream: true, messages });
  const { frames, textWhileUpstreamWaited } = await readLive(response, (frame) => frame.data.includes('"text_delta"'));
  expect(textWhileUpstreamWaited).toBe(true);
  // the blocks as a client folds them: thinking (signed as it ended), text, then one more thinking block with the whole turn's envelope
  const blocks: Record<string, unknown>[] = [];
  for (const frame of frames) {
    const data = JSON.parse(frame.data) as { type: string; index: number; content_block?: Record<string, unknown>; delta?: Record<string, string> };
    if (data.type === "content_block_start") blocks[data.index] = { ...data.content_block };
    if (data.type === "content_block_delta") {
      const block = blocks[data.index]!;
      if (data.delta!.type === "thinking_delta") block.thinking = String(block.thinking) + data.delta!.thinking;
      if (data.delta!.type === "text_delta") block.text = String(block.text) + data.delta!.text;
      if (data.delta!.type === "signature_delta") block.signature = data.delta!.signature;
    }
  }
  expect(blocks.map((block) => block.type)).toEqual(["thinking", "text", "thinking"]);
  expect(blocks[0]!.signature).toMatch(/^cd1\./);
  expect(blocks[2]).toMatchObject({ thinking: "", signature: expect.stringMatching(/^cd1\./) as string });
  const n = upstream.received.length;
  await forgetSession(response);
  const next = await post("/v1/messages", {
    model: "late-carriers",
    max_tokens: 1024,
    stream: true,
    messages: [...messages, { role: "assistant", content: blocks }, { role: "user", content: "and then?" }],
  });
  await readLive(next, (frame) => frame.data.includes('"text_delta"'));
  expect(lastAssistant()).toMatchObject({
    content: `Answer ${n} is here.`,
    reasoning_content: `Thinking ${n}, step by step.`,
    reasoning_details: lateCarriers(n),
  });
});
