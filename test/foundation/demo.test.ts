import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { chunkDeltas, type Chunk } from "./sse-chunks.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

const question = [{ role: "user", content: "What is 12 * (3 + 4)?" }];
const lookupTool = {
  type: "function",
  function: { name: "lookup", description: "Looks a word up", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
};

async function stream(body: Record<string, unknown>): Promise<Chunk[]> {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", stream: true, ...body });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const { events, done } = await readSse(response);
  expect(done).toBe(true);
  return events as Chunk[];
}

test("the stream opens with the role, reasons, then answers, then finishes", async () => {
  const chunks = await stream({ messages: question });
  for (const chunk of chunks) {
    expect(chunk.object).toBe("chat.completion.chunk");
    expect(chunk.model).toBe("demo");
    expect(Array.isArray(chunk.choices)).toBe(true);
  }
  expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
  expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
  const summary = chunkDeltas(chunks);
  expect(summary.lastReasoningIndex).toBeGreaterThan(0);
  expect(summary.firstContentIndex).toBeGreaterThan(summary.lastReasoningIndex);
  expect(summary.reasoning).toMatch(/^Step 1: .*\nStep 2: .*arithmetic.*84/s);
  expect(summary.content).toBe("(simulated) The answer is 84.");
  expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  expect(chunks.at(-1)!.choices[0]!.delta).toEqual({});
  expect(chunks.some((chunk) => chunk.usage)).toBe(false); // usage only when asked for
});

test("include_usage adds a final choices:[] chunk with reasoning_tokens", async () => {
  const chunks = await stream({ messages: question, stream_options: { include_usage: true } });
  const last = chunks.at(-1)!;
  expect(last.choices).toEqual([]);
  const usage = last.usage as {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    completion_tokens_details: { reasoning_tokens: number };
  };
  expect(usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop");
});

test("non-stream carries the same reasoning in message.reasoning_content", async () => {
  const streamed = chunkDeltas(await stream({ messages: question }));
  const response = await gateway.post("/v1/chat/completions", { model: "demo", messages: question });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-session-id")).toBeTruthy();
  const body = (await response.json()) as {
    object: string;
    choices: { message: Record<string, unknown>; finish_reason: string }[];
    usage: { completion_tokens_details: { reasoning_tokens: number } };
  };
  expect(body.object).toBe("chat.completion");
  expect(body.choices[0]!.message).toEqual({ role: "assistant", content: streamed.content, reasoning_content: streamed.reasoning });
  expect(body.choices[0]!.finish_reason).toBe("stop");
  expect(body.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
});

test("offered a tool, the demo reasons and then calls it", async () => {
  const chunks = await stream({ messages: [{ role: "user", content: "define serendipity" }], tools: [lookupTool] });
  const summary = chunkDeltas(chunks);
  expect(summary.reasoning).toContain('a tool named "lookup" is offered');
  expect(summary.content).toBe("");
  expect(summary.toolCalls).toHaveLength(1);
  const [call] = summary.toolCalls;
  expect(call!.id).toMatch(/^call_demo_/);
  expect(call!.type).toBe("function");
  expect(call!.function.name).toBe("lookup");
  expect(JSON.parse(call!.function.arguments)).toEqual({ query: "define serendipity" });
  expect(summary.finishReason).toBe("tool_calls");
});

test("given the tool's result, the demo answers from it", async () => {
  const response = await gateway.post("/v1/chat/completions", {
    model: "demo",
    tools: [lookupTool],
    messages: [
      { role: "user", content: "define serendipity" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"query":"serendipity"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "finding good things without looking for them" },
    ],
  });
  const body = (await response.json()) as {
    choices: { message: { content: string; reasoning_content: string; tool_calls?: unknown }; finish_reason: string }[];
  };
  const { message } = body.choices[0]!;
  expect(message.tool_calls).toBeUndefined();
  expect(message.reasoning_content).toContain("the tool answered");
  expect(message.content).toBe("(simulated) The tool says: finding good things without looking for them");
  expect(body.choices[0]!.finish_reason).toBe("stop");
});

test("model_options.reasoning.enabled:false suppresses reasoning", async () => {
  const summary = chunkDeltas(await stream({ messages: question, model_options: { reasoning: { enabled: false } } }));
  expect(summary.reasoning).toBe("");
  expect(summary.content).toBe("(simulated) The answer is 84.");
});

test("the route table's models and the capabilities are served", async () => {
  const response = await gateway.fetch("/v1/models");
  const body = (await response.json()) as { object: string; data: { id: string }[] };
  expect(body.object).toBe("list");
  expect(body.data.map((model) => model.id)).toEqual(["demo"]);
  const capabilities = (await (await gateway.fetch("/v1/capabilities")).json()) as { object: string; features: Record<string, unknown> };
  expect(capabilities.object).toBe("capabilities");
  expect(capabilities.features).toMatchObject({ reasoning_streaming: true, responses_api: true, reasoning_replay: true, websocket_events: true });
});

test("a huge question answers promptly (no pathological backtracking in the simulation)", async () => {
  const started = performance.now();
  const response = await gateway.post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "7".repeat(2_000_000) }] });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  expect(body.choices[0]!.message.content).toMatch(/^\(simulated\) You said/);
  expect(performance.now() - started).toBeLessThan(10_000); // quadratic backtracking took hours on this input
});
