import { afterAll, beforeAll, expect, test } from "vitest";
import { openEvents } from "../events/ws-client.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

let slow: DeepSeekUpstream;
let lingering: DeepSeekUpstream;
let recorded: DeepSeekUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  slow = await startDeepSeek({ firstByteDelayMs: 1600 });
  lingering = await startDeepSeek({ finishDelayMs: 800 });
  recorded = await startDeepSeek({ answers: { kind: "recorded" } });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  demo: { plugin: demo }
  slow: { plugin: openai-compatible, base_url: "${slow.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  recorded: { plugin: openai-compatible, base_url: "${recorded.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  lingering: { plugin: openai-compatible, base_url: "${lingering.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: slow-reasoner, provider: slow, model: deepseek-reasoner }
  - { name: deepseek-reasoner, provider: recorded, model: deepseek-reasoner }
  - { name: lingering-reasoner, provider: lingering, model: deepseek-reasoner }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { DEEPSEEK_API_KEY: "sk-emulated" },
    gatewayOptions: { keepaliveSeconds: 1 },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await slow?.close();
  await lingering?.close();
  await recorded?.close();
});

/** An Anthropic event stream: every event named, its data JSON whose `type` is the name. */
function eventsOf(raw: string): { name: string; data: Record<string, unknown> }[] {
  return raw
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const name = /^event: (.+)$/m.exec(frame)?.[1];
      const data = /^data: (.+)$/m.exec(frame)?.[1];
      expect(name, frame).toBeDefined();
      const parsed = JSON.parse(data!) as Record<string, unknown>;
      expect(parsed.type).toBe(name);
      return { name: name!, data: parsed };
    });
}

function stream(model: string, content: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": gateway.key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 1024, stream: true, messages: [{ role: "user", content }], ...extra }),
  });
}

test("Anthropic's event order: message_start, each block's start/deltas/stop in turn, message_delta, message_stop", async () => {
  const response = await stream("demo", "What is 2+2?");
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events = eventsOf(await response.text());
  const names = events.map((event) => event.name);
  expect(names[0]).toBe("message_start");
  expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
  const message = events[0]!.data.message as Record<string, unknown>;
  expect(message).toMatchObject({ type: "message", role: "assistant", model: "demo", content: [], stop_reason: null });
  // blocks open and close one at a time, indexed from 0
  let open: number | undefined;
  let next = 0;
  for (const { name, data } of events.slice(1, -2)) {
    if (name === "content_block_start") {
      expect(open).toBeUndefined();
      expect(data.index).toBe(next);
      open = next++;
    } else if (name === "content_block_delta") expect(data.index).toBe(open);
    else if (name === "content_block_stop") {
      expect(data.index).toBe(open);
      open = undefined;
    } else expect(name).toBe("ping");
  }
  const starts = events.filter((event) => event.name === "content_block_start").map((event) => (event.data.content_block as { type: string }).type);
  expect(starts).toEqual(["thinking", "text"]);
  const deltaTypes = new Set(events.filter((event) => event.name === "content_block_delta").map((event) => (event.data.delta as { type: string }).type));
  expect([...deltaTypes].sort()).toEqual(["signature_delta", "text_delta", "thinking_delta"]);
  // the thinking block's signature, just before its stop: the sealed envelope of the turn's carriers
  const signature = events.findIndex((event) => event.name === "content_block_delta" && (event.data.delta as { type: string }).type === "signature_delta");
  expect(events[signature]!.data).toMatchObject({ index: 0, delta: { signature: expect.stringMatching(/^cd1\./) as string } });
  expect(events[signature + 1]).toMatchObject({ name: "content_block_stop", data: { index: 0 } });
  expect(events.at(-2)!.data).toMatchObject({
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: expect.any(Number) as number },
  });
});

test("a tool call streams as a tool_use block: its id and name first, then its input as input_json_delta", async () => {
  const tools = [{ name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } }];
  const events = eventsOf(await (await stream("demo", "weather in Paris?", { tools })).text());
  const start = events.find((event) => event.name === "content_block_start" && (event.data.content_block as { type: string }).type === "tool_use")!;
  expect(start.data.content_block).toMatchObject({ type: "tool_use", id: expect.stringMatching(/^call_/) as string, name: "weather", input: {} });
  const json = events
    .filter((event) => event.name === "content_block_delta" && event.data.index === start.data.index)
    .map((event) => (event.data.delta as { type: string; partial_json: string }).partial_json)
    .join("");
  expect(JSON.parse(json)).toHaveProperty("location");
  expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: "tool_use" } });
});

/** The stream's text, and how long before its end its first text_delta arrived. */
async function textLead(response: Response): Promise<{ raw: string; leadMs: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let raw = "";
  let textAt: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    if (textAt === undefined && raw.includes('"text_delta"')) textAt = performance.now();
  }
  return { raw, leadMs: performance.now() - textAt! };
}

test("on a route whose carriers are whole once it has reasoned, the thinking is signed as it ends and the text streams live", async () => {
  const { raw, leadMs } = await textLead(await stream("lingering-reasoner", "hello"));
  // the upstream waited 800 ms before finishing: the text had reached the client before that
  expect(leadMs).toBeGreaterThan(500);
  const events = eventsOf(raw);
  const signature = events.find((event) => (event.data.delta as { type?: string } | undefined)?.type === "signature_delta")!;
  expect(events.indexOf(signature)).toBeLessThan(events.findIndex((event) => (event.data.delta as { type?: string } | undefined)?.type === "text_delta"));
});

test("while the upstream has not answered, the client gets ping events, then the message", async () => {
  const events = eventsOf(await (await stream("slow-reasoner", "hello")).text());
  expect(events[0]!.name).toBe("ping");
  const start = events.findIndex((event) => event.name === "message_start");
  expect(start).toBeGreaterThan(0);
  expect(events.slice(0, start).every((event) => event.name === "ping")).toBe(true);
  expect(events.at(-1)!.name).toBe("message_stop");
});

test("an upstream that breaks mid-stream ends the stream with an error event, never with message_stop", async () => {
  const events = eventsOf(await (await stream("deepseek-reasoner", "FAIL_MID_STREAM")).text());
  expect(events.at(-1)).toMatchObject({ name: "error", data: { type: "error", error: { type: "api_error", message: expect.any(String) as string } } });
  expect(events.some((event) => event.name === "message_stop")).toBe(false);
});

test("a Messages turn is a turn like any other: its session in X-Session-Id, its events on /v1/events", async () => {
  const client = await openEvents(gateway);
  await client.subscribe();
  const response = await stream("demo", "What is 3+4?", { tools: undefined });
  const sessionId = response.headers.get("x-session-id");
  expect(sessionId).toMatch(/^sess_/);
  await response.text();
  const completed = await client.waitFor((message) => message.type === "turn.completed" && message.session_id === sessionId);
  const types = client.messages.filter((message) => message.turn_id === completed.turn_id).map((message) => message.type);
  expect(types[0]).toBe("turn.started");
  expect(types).toContain("reasoning.delta");
  client.close();
});
