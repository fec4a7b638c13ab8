import { afterAll, beforeAll, expect, test } from "vitest";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";

/**
 * What the Responses API refuses, as the emulator answers it: the mistakes
 * the plugin must never make (each error text is OpenAI's, cited in the
 * emulator). Every one here is a request the plugin does not send.
 */
const KEY = "sk-openai-test";
let upstream: ResponsesUpstream;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY });
});
afterAll(() => upstream?.close());

async function send(body: Record<string, unknown>, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }) {
  const response = await fetch(`${upstream.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      error?: { message: string; type: string; param: string | null; code: string | null };
      output?: Record<string, unknown>[];
    },
  };
}

const USER = { type: "message", role: "user", content: "Weather?" };
const TOOLS = [{ type: "function", name: "weather", parameters: { type: "object", properties: {} }, strict: false }];
const BASE = { model: "gpt-5", store: false, include: ["reasoning.encrypted_content"], tools: TOOLS };

async function firstTurn(): Promise<Record<string, unknown>[]> {
  const { status, body } = await send({ ...BASE, input: [USER] });
  expect(status).toBe(200);
  return body.output!;
}

test("a reasoning item by id alone, under store: false", async () => {
  const [reasoning, call] = await firstTurn();
  const { status, body } = await send({
    ...BASE,
    input: [USER, { type: "reasoning", id: reasoning!.id, summary: [] }, call, { type: "function_call_output", call_id: call!.call_id, output: "20 C" }],
  });
  expect(status).toBe(404);
  expect(body.error).toEqual({
    message: `Item with id '${String(reasoning!.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
    type: "invalid_request_error",
    param: "input",
    code: null,
  });
});

test("a blob sent to another model, or altered, does not verify", async () => {
  const [reasoning, call] = await firstTurn();
  const output = { type: "function_call_output", call_id: call!.call_id, output: "20 C" };
  const blob = String(reasoning!.encrypted_content);
  for (const [model, sent] of [
    ["o4-mini", blob],
    ["gpt-5", `${blob.slice(0, 20)}${blob[20] === "A" ? "B" : "A"}${blob.slice(21)}`],
  ] as const) {
    const { status, body } = await send({ ...BASE, model, input: [USER, { ...reasoning, encrypted_content: sent }, call, output] });
    expect(status).toBe(400);
    expect(body.error).toEqual({
      message: `The encrypted content ${sent.slice(0, 4)}...${sent.slice(-4)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
      type: "invalid_request_error",
      param: null,
      code: "invalid_encrypted_content",
    });
  }
  // the same blob to its own model is accepted
  expect((await send({ ...BASE, input: [USER, reasoning, call, output] })).status).toBe(200);
});

test("a function call with its item id, without the reasoning item it followed; a reasoning item with nothing after it", async () => {
  const [reasoning, call] = await firstTurn();
  const output = { type: "function_call_output", call_id: call!.call_id, output: "20 C" };
  const missing = await send({ ...BASE, input: [USER, call, output] });
  expect(missing.status).toBe(400);
  expect(missing.body.error!.message).toBe(
    `Item '${String(call!.id)}' of type 'function_call' was provided without its required 'reasoning' item: '${String(reasoning!.id)}'.`,
  );
  const { id: _id, ...anonymous } = call!;
  expect((await send({ ...BASE, input: [USER, anonymous, output] })).status).toBe(200);
  const dangling = await send({ ...BASE, input: [USER, reasoning] });
  expect(dangling.body.error!.message).toBe(`Item '${String(reasoning!.id)}' of type 'reasoning' was provided without its required following item.`);
});

test("unknown parameters, top-level and on an item; a wrong key", async () => {
  const top = await send({ ...BASE, input: [USER], reasoning_effort: "high" });
  expect([top.status, top.body.error]).toEqual([
    400,
    { message: "Unknown parameter: 'reasoning_effort'.", type: "invalid_request_error", param: "reasoning_effort", code: "unknown_parameter" },
  ]);
  const item = await send({ ...BASE, input: [{ ...USER, reasoning_content: "x" }] });
  expect(item.body.error!.message).toBe("Unknown parameter: 'input[0].reasoning_content'.");
  expect((await send({ ...BASE, input: [USER] }, { authorization: "Bearer wrong" })).status).toBe(401);
  expect((await send({ ...BASE, input: [USER] }, { "api-key": KEY })).status).toBe(200);
});
