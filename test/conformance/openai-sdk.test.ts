import OpenAI from "openai";
import { afterEach, afterAll, beforeAll, describe, expect, test } from "vitest";
import { readSse } from "../support/gateway.js";
import { WEATHER_TOOL } from "./harness.js";
import { MODELS, startConformance, type ConformanceSetup } from "./harness.js";

let setup: ConformanceSetup;
let client: OpenAI;
beforeAll(async () => {
  setup = await startConformance();
  client = new OpenAI({ apiKey: setup.gateway.key, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0, fetch: setup.spec.fetch });
});
afterAll(() => setup?.stop());
// every answer of /v1/responses in this file is checked against the Open Responses spec
afterEach(() => setup?.spec.verify());

const QUESTION = "How many r's are in the word strawberry?";
const RESPONSES_WEATHER = {
  type: "function" as const,
  name: "weather",
  description: "Get the weather in a location",
  strict: false,
  parameters: WEATHER_TOOL.function.parameters,
};

describe.each(MODELS)("openai SDK against %s", (model) => {
  test("chat.completions.create streaming: role first, reasoning_content then content, OpenAI's usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: QUESTION }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => Array.isArray(chunk.choices) && chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks.slice(1).some((chunk) => chunk.choices[0]?.delta.role)).toBe(false);
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta as { content?: string | null; reasoning_content?: string }));
    const reasoning = deltas.map((delta) => delta.reasoning_content ?? "").join("");
    const content = deltas.map((delta) => delta.content ?? "").join("");
    expect(reasoning.length).toBeGreaterThan(10);
    expect(content.length).toBeGreaterThan(0);
    expect(deltas.findLastIndex((delta) => delta.reasoning_content)).toBeLessThan(deltas.findIndex((delta) => delta.content));
    const usage = chunks[chunks.length - 1]!;
    expect(usage.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
    if (model === "demo") {
      // carrierd's own stream: OpenAI's usage chunk of its own after the finish
      expect(usage.choices).toEqual([]);
      expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe("stop");
    } else {
      // carried (docs/api.md#carried-chat-completions): DeepSeek's own stream, its usage on the chunk that finishes
      expect(usage.choices[0]!.finish_reason).toBe("stop");
    }
  });

  test("chat.completions.create non-streaming: message.reasoning_content", async () => {
    const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: QUESTION }] });
    const message = completion.choices[0]!.message as (typeof completion.choices)[0]["message"] & { reasoning_content?: string };
    expect(completion.object).toBe("chat.completion");
    expect(message.content?.length).toBeGreaterThan(0);
    expect(message.reasoning_content?.length).toBeGreaterThan(10);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
  });

  test("chat.completions.create streaming tool call", async () => {
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      tools: [WEATHER_TOOL],
      messages: [{ role: "user", content: "What's the weather in San Francisco?" }],
    });
    let name = "";
    let args = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        expect(call.index).toBe(0);
        name += call.function?.name ?? "";
        args += call.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe("weather");
    expect(JSON.parse(args)).toHaveProperty("location");
    expect(finish).toBe("tool_calls");
  });

  test("responses.create streaming: events in the documented order, numbered from 0", async () => {
    const stream = await client.responses.create({ model, input: QUESTION, stream: true });
    const types: string[] = [];
    let sequence = -1;
    let reasoningText = "";
    for await (const event of stream) {
      expect(event.sequence_number).toBe(sequence + 1);
      sequence = event.sequence_number;
      types.push(event.type);
      if (event.type === "response.reasoning_summary_text.delta") reasoningText += event.delta;
    }
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.reasoning_summary_part.added"]);
    expect(types[types.length - 1]).toBe("response.completed");
    const reasoningDone = types.indexOf("response.output_item.done");
    expect(types.slice(2, reasoningDone + 1).filter((type) => type.startsWith("response.reasoning_summary")).length).toBeGreaterThan(3);
    expect(types.indexOf("response.content_part.added")).toBeGreaterThan(reasoningDone);
    expect(reasoningText.length).toBeGreaterThan(10);
  });

  test("responses.stream().finalResponse(): the strict accumulator accepts the stream", async () => {
    const final = await client.responses.stream({ model, input: QUESTION }).finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary[0]!.type).toBe("summary_text");
    expect(reasoning.summary[0]!.text.length).toBeGreaterThan(10);
    const message = final.output[1] as OpenAI.Responses.ResponseOutputMessage;
    expect((message.content[0] as OpenAI.Responses.ResponseOutputText).text.length).toBeGreaterThan(0);
  });

  test("responses.stream() with a tool: function_call item, arguments accumulated by the SDK", async () => {
    const stream = client.responses.stream({ model, input: "What's the weather in San Francisco?", tools: [RESPONSES_WEATHER] });
    let snapshot = "";
    stream.on("response.function_call_arguments.delta", (event) => (snapshot = event.snapshot));
    const final = await stream.finalResponse();
    const call = final.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(final.output[0]!.type).toBe("reasoning");
    expect(call.name).toBe("weather");
    expect(snapshot).toBe(call.arguments);
    expect(JSON.parse(call.arguments)).toHaveProperty("location");
  });

  test("responses.create non-streaming, retrieve, continue with previous_response_id, delete", async () => {
    const first = await client.responses.create({ model, input: QUESTION });
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(first.output_text.length).toBeGreaterThan(0);
    const fetched = await client.responses.retrieve(first.id);
    expect(fetched.id).toBe(first.id);
    expect(fetched.output).toEqual(first.output);
    const second = await client.responses.create({ model, input: "And in raspberry?", previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.status).toBe("completed");
    await client.responses.delete(first.id);
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });
});

test("chat stream on the wire: a choices array on every chunk, then [DONE]", async () => {
  for (const model of MODELS) {
    const response = await setup.gateway.post("/v1/chat/completions", {
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: QUESTION }],
    });
    const { events, done } = await readSse(response);
    expect(done).toBe(true);
    for (const event of events) expect(Array.isArray((event as { choices?: unknown }).choices)).toBe(true);
  }
});
