import { afterEach, afterAll, beforeAll, describe, expect, test } from "vitest";
import { startConformance, MODELS, type ConformanceSetup } from "./harness.js";
import { checkResponseStream, parseEvents } from "./responses-order.js";

let setup: ConformanceSetup;
beforeAll(async () => {
  setup = await startConformance();
});
afterAll(() => setup?.stop());
// every answer of /v1/responses in this file is checked against the Open Responses spec
afterEach(() => setup?.spec.verify({ expectSome: true }));

const WEATHER = {
  type: "function",
  name: "weather",
  description: "Get the weather",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

describe.each(MODELS)("POST /v1/responses streaming, %s", (model) => {
  test("reasoning item closes before the message item; completed lists both", async () => {
    const response = await setup.gateway.post("/v1/responses", { model, input: "How many r's are in strawberry?", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-session-id")).toBeTruthy();
    const final = checkResponseStream(parseEvents(await response.text()));
    expect(final.status).toBe("completed");
    const output = final.output as Record<string, unknown>[];
    expect(output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = output[0]!;
    expect(Object.keys(reasoning).sort()).toEqual(["id", "status", "summary", "type"]);
    expect(reasoning.id).toMatch(/^rs_/);
    expect((reasoning.summary as { text: string }[])[0]!.text.length).toBeGreaterThan(10);
    expect(output[1]!.id).toMatch(/^msg_/);
    expect((final.usage as { output_tokens_details: { reasoning_tokens: number } }).output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  test("a tool call is a function_call item after the reasoning item", async () => {
    const response = await setup.gateway.post("/v1/responses", { model, input: "What is the weather in San Francisco?", tools: [WEATHER], stream: true });
    const final = checkResponseStream(parseEvents(await response.text()));
    const output = final.output as Record<string, unknown>[];
    expect(output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    expect(output[1]!.id).toMatch(/^fc_/);
    expect(output[1]!.name).toBe("weather");
    expect(JSON.parse(output[1]!.arguments as string)).toHaveProperty("location");
  });

  test("model_options.reasoning.enabled: false leaves no reasoning item", async () => {
    const response = await setup.gateway.post("/v1/responses", {
      model,
      input: "How many r's are in strawberry?",
      stream: true,
      model_options: { reasoning: { enabled: false } },
    });
    const final = checkResponseStream(parseEvents(await response.text()));
    expect((final.output as { type: string }[]).map((item) => item.type)).toEqual(["message"]);
  });
});

test("non-streaming returns the same items, reasoning first", async () => {
  for (const model of MODELS) {
    const response = await setup.gateway.post("/v1/responses", { model, input: "How many r's are in strawberry?" });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; status: string; output: { type: string; status: string; summary?: unknown }[] };
    expect(body.object).toBe("response");
    expect(body.status).toBe("completed");
    expect(body.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(body.output[0]!.summary).toEqual([{ type: "summary_text", text: expect.any(String) }]);
  }
});

test("an upstream that drops mid-stream ends with error, then response.failed", async () => {
  const response = await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FAIL_MID_STREAM please", stream: true });
  const events = parseEvents(await response.text());
  const final = checkResponseStream(events);
  expect(final.status).toBe("failed");
  expect((final.error as { message: string }).message).toBeTruthy();
  const error = events[events.length - 2]!.data;
  expect(error.type).toBe("error");
  expect((error.error as { message: string }).message).toBe(error.message);
});

test("an upstream 400 before the stream is an OpenAI-shaped 400, not a stream", async () => {
  const response = await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FAIL_400", stream: true });
  expect(response.status).toBe(400);
  expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/reasoning_content/);
});

test("an answer cut off by the token limit is an incomplete response, streamed and not", async () => {
  const streamed = await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FINISH_LENGTH", stream: true });
  const events = parseEvents(await streamed.text());
  const final = checkResponseStream(events);
  expect(events[events.length - 1]!.data.type).toBe("response.incomplete");
  expect(final).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  const whole = (await (await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FINISH_LENGTH" })).json()) as Record<string, unknown>;
  expect(whole).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
});
