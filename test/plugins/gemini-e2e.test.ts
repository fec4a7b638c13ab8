import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ask } from "../support/stateless-client.js";
import { SKIP, startGeminiEmulator } from "./emulators/gemini-emulator.js";
import { startCassetteEmulator, type Emulator } from "./emulators/http-emulator.js";
import { json } from "./support/fixtures.js";
import { expectedTurn2, GEMINI_CASSETTES, geminiScenario } from "./support/gemini-cassettes.js";

const KEY = "gemini-test-key";

function routes(url: string, model: string, params?: object): string {
  return `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: g, provider: gemini, model: ${model}${params ? `, params: ${JSON.stringify(params)}` : ""} }
carriers:
  - match: {}
    fields: [reasoning_content]
`;
}

describe.each(GEMINI_CASSETTES)("recorded traffic through the daemon: %s", (path) => {
  const scenario = geminiScenario(path);
  let upstream: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    upstream = await startCassetteEmulator(scenario.interactions);
    gateway = await startTestGateway({ routes: routes(upstream.url, scenario.model, scenario.params), env: { GEMINI_API_KEY: KEY } });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test("a stateless client's turn 2 reaches Gemini with every signature on its part", async () => {
    const request = { model: "g", stream: scenario.stream, ...scenario.request };
    const first = await ask(gateway, { ...request, messages: [scenario.system, scenario.user] });
    expect(first.status).toBe(200);
    expect(upstream.received[0]!.path).toBe(new URL(scenario.interactions[0]!.request.url).pathname + new URL(scenario.interactions[0]!.request.url).search);
    expect(upstream.received[0]!.body).toEqual(json(scenario.interactions[0]!.request.body));
    const calls = first.kept.tool_calls as { id: string }[];
    const results = calls.map((call, index) => ({ role: "tool", tool_call_id: call.id, content: scenario.results[index] }));
    const second = await ask(gateway, { ...request, messages: [scenario.system, scenario.user, first.kept, ...results] });
    expect(second.status).toBe(200);
    expect(upstream.received[1]!.body).toEqual(expectedTurn2(scenario));
  });
});

describe("the signature-verifying emulator, through the daemon", () => {
  const log = captureLog();
  let gemini: Emulator;
  let gateway: TestGateway;
  const weather = {
    type: "function",
    function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } },
  };
  beforeAll(async () => {
    gemini = await startGeminiEmulator({ apiKey: KEY });
    gateway = await startTestGateway({ routes: routes(gemini.url, "gemini-3-pro-preview"), env: { GEMINI_API_KEY: KEY }, log: log.logger });
  });
  afterAll(async () => {
    await gateway.stop();
    await gemini.close();
  });

  test.each([false, true])("stream=%s: parallel calls, then a text answer, then a follow-up, all accepted", async (stream) => {
    const user = { role: "user", content: "Weather in Rome and Oslo?" };
    const first = await ask(gateway, { model: "g", stream, reasoning_effort: "high", tools: [weather], messages: [user] });
    expect(first.status).toBe(200);
    expect(first.reasoning).toContain("I will look up both cities at once.");
    const calls = first.kept.tool_calls as { id: string }[];
    expect(calls).toHaveLength(2);
    const history = [
      user,
      first.kept,
      { role: "tool", tool_call_id: calls[0]!.id, content: "20 C" },
      { role: "tool", tool_call_id: calls[1]!.id, content: "1 C" },
    ];
    const second = await ask(gateway, { model: "g", stream, tools: [weather], messages: history });
    expect(second.status).toBe(200);
    expect(second.kept.content).toBe("It is 20 C and 1 C.");
    const third = await ask(gateway, { model: "g", stream, tools: [weather], messages: [...history, second.kept, { role: "user", content: "Thanks!" }] });
    expect(third.status).toBe(200);
    const sent = gemini.received.at(-1)!.body as { contents: { role: string; parts: Record<string, unknown>[] }[] };
    const answer = sent.contents[3]!;
    expect(answer.role).toBe("model");
    // the text answer's signature goes back where it came: on the text (non-stream) or the trailing empty part (stream)
    if (stream) expect(answer.parts).toEqual([{ text: "It is 20 C and 1 C." }, { text: "", thoughtSignature: expect.any(String) }]);
    else expect(answer.parts).toEqual([{ text: "It is 20 C and 1 C.", thoughtSignature: expect.any(String) }]);
    expect(JSON.stringify(sent)).not.toContain("native_record");
    expect(JSON.stringify(sent)).not.toContain(SKIP);
    // every call here was signed by Gemini and carrierd holds the signature: no skip line was ever written
    expect(log.lines.filter((line) => line.message.includes("skip value"))).toEqual([]);
  });

  test("a function call from elsewhere is sent with the skip value and accepted, with a debug line", async () => {
    const lines = log.lines.length;
    const foreign = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_other", type: "function", function: { name: "weather", arguments: '{"location":"Lima"}' } }],
    };
    const reply = await ask(gateway, {
      model: "g",
      tools: [weather],
      messages: [{ role: "user", content: "Lima?" }, foreign, { role: "tool", tool_call_id: "call_other", content: "18 C" }],
    });
    expect(reply.status).toBe(200);
    const parts = (gemini.received.at(-1)!.body as { contents: { parts: Record<string, unknown>[] }[] }).contents[1]!.parts;
    expect(parts[0]!.thoughtSignature).toBe(SKIP);
    const debug = log.lines.slice(lines).find((line) => line.level === "debug" && line.message.includes("skip value"));
    expect(debug?.object).toMatchObject({ model: "gemini-3-pro-preview", function: "weather", signature: SKIP });
  });
});

describe("the emulator itself rejects what Gemini rejects", () => {
  let gemini: Emulator;
  beforeAll(async () => {
    gemini = await startGeminiEmulator({ apiKey: KEY });
  });
  afterAll(() => gemini.close());

  async function post(contents: unknown[]): Promise<{ status: number; message: string }> {
    const response = await fetch(`${gemini.url}/v1beta/models/gemini-3-pro-preview:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": KEY },
      body: JSON.stringify({ contents }),
    });
    const body = (await response.json()) as { error?: { message: string } };
    return { status: response.status, message: body.error?.message ?? "" };
  }

  test("an unsigned function call in the current turn is the exact 400", async () => {
    const result = await post([
      { role: "user", parts: [{ text: "Lima?" }] },
      { role: "model", parts: [{ functionCall: { name: "weather", args: { location: "Lima" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "weather", response: { result: "18 C" } } }] },
    ]);
    expect(result).toEqual({
      status: 400,
      message:
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:weather` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
    });
  });

  test("a signature moved to another call, or unknown fields, are rejected", async () => {
    const moved = await post([
      { role: "user", parts: [{ text: "Lima?" }] },
      { role: "model", parts: [{ functionCall: { name: "weather", args: { location: "Lima" } }, thoughtSignature: "bm90LW91cnM=" }] },
      { role: "user", parts: [{ functionResponse: { name: "weather", response: { result: "18 C" } } }] },
    ]);
    expect(moved).toEqual({ status: 400, message: "Corrupted thought signature." });
    const leaked = await post([{ role: "user", parts: [{ text: "hi" }], native_record: {} }]);
    expect(leaked.message).toBe("Invalid JSON payload received. Unknown name \"native_record\" at 'contents[0]': Cannot find field.");
  });
});
