import { GoogleGenAI, type Content, type Part } from "@google/genai";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SKIP, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import { startEmulator, type Emulator } from "../plugins/emulators/http-emulator.js";
import { readFixture } from "../support/fixtures-dir.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * A Gemini-door request on a Gemini route is carried (docs/api.md#carried-requests):
 * the upstream receives the client's body byte for byte — Gemini CLI's
 * recorded requests, @google/genai's — but for the listed changes (a
 * thoughtSignature the client dropped put back, carrierd's envelope taken
 * off), the model of the path mapped to the route's, the route's key; the
 * client receives the upstream's answer and refusals as they were sent.
 */
let gemini: Emulator;
let refusing: Emulator;
let failing: Emulator;
let gateway: TestGateway;
let sdk: GoogleGenAI;
let direct: GoogleGenAI;

const UPSTREAM_MODEL = "gemini-3-pro-preview";
const MID_STREAM =
  `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }], modelVersion: "gemini-3-pro-preview" })}\r\n\r\n` +
  `data: ${JSON.stringify({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } })}\r\n\r\n`;
const RETRY_BODY = JSON.stringify({ error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } });

beforeAll(async () => {
  gemini = await startGeminiEmulator({ apiKey: "gemini-route-key" });
  refusing = await startEmulator(() => ({ status: 429, json: JSON.parse(RETRY_BODY) as unknown, headers: { "retry-after": "17" } }));
  failing = await startEmulator(() => ({ status: 200, sse: MID_STREAM }));
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
  busy: { plugin: gemini, base_url: ${refusing.url}, api_key_env: GEMINI_API_KEY }
  failing: { plugin: gemini, base_url: ${failing.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: gemini-3.5-flash-lite, provider: gemini, model: ${UPSTREAM_MODEL} }
  - { name: gemini-3.8-flash, provider: gemini, model: ${UPSTREAM_MODEL} }
  - { name: ${UPSTREAM_MODEL}, provider: gemini, model: ${UPSTREAM_MODEL} }
  - { name: busy-gemini, provider: busy, model: ${UPSTREAM_MODEL} }
  - { name: failing-gemini, provider: failing, model: ${UPSTREAM_MODEL} }
`,
    env: { GEMINI_API_KEY: "gemini-route-key" },
  });
  sdk = new GoogleGenAI({ apiKey: gateway.key, httpOptions: { baseUrl: gateway.url } });
  direct = new GoogleGenAI({ apiKey: "gemini-route-key", httpOptions: { baseUrl: gemini.url } });
});
afterAll(async () => {
  await gateway?.stop();
  await gemini?.close();
  await refusing?.close();
  await failing?.close();
});

interface Recorded {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

const recorded = (name: string) => JSON.parse(readFixture(`clients/${name}`)) as Recorded;

function post(path: string, bytes: Buffer | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers, "x-goog-api-key": gateway.key },
    body: bytes,
  });
}

test("Gemini CLI's router request: the upstream gets its bytes, the route's model in the path and the route's key; the answer comes back as sent", async () => {
  const fixture = recorded("gemini-cli-0.61.0-router-req.json");
  const bytes = Buffer.from(JSON.stringify(fixture.body));
  const before = gemini.received.length;
  const answer = await post(fixture.url, bytes, { "x-goog-api-client": fixture.headers["x-goog-api-client"]! });
  expect(answer.status).toBe(200);
  expect(gemini.received.length - before).toBe(1);
  const sent = gemini.received.at(-1)!;
  expect(sent.raw.equals(bytes)).toBe(true);
  expect(sent.path).toBe(`/v1beta/models/${UPSTREAM_MODEL}:generateContent`);
  expect(sent.headers["x-goog-api-key"]).toBe("gemini-route-key");
  expect(sent.headers["x-goog-api-client"]).toBe(fixture.headers["x-goog-api-client"]);
  // the upstream's own object: its model version, its response id, not carrierd's
  const whole = (await answer.json()) as { modelVersion: string; responseId: string };
  expect(whole).toMatchObject({ modelVersion: UPSTREAM_MODEL, responseId: "resp-1" });
  expect(answer.headers.get("x-session-id")).toBeTruthy();
});

test("Gemini CLI's tool-result request (SSE): byte for byte, its {output} as sent; Google's refusal of a signature it did not issue reaches the client unchanged", async () => {
  const fixture = recorded("gemini-cli-0.61.0-toolresult-req.json");
  const bytes = Buffer.from(JSON.stringify(fixture.body));
  expect(bytes.toString()).toContain('"response":{"output":');
  const before = gemini.received.length;
  const answer = await post(fixture.url, bytes);
  // the recorded signature is Google's own, which this emulator did not issue: it refuses it as Gemini does
  expect(gemini.received.length - before).toBe(1);
  const sent = gemini.received.at(-1)!;
  expect(sent.raw.equals(bytes)).toBe(true);
  expect(sent.path).toBe(`/v1beta/models/${UPSTREAM_MODEL}:streamGenerateContent?alt=sse`);
  expect(answer.status).toBe(400);
  expect(await answer.text()).toBe(JSON.stringify({ error: { code: 400, message: "Corrupted thought signature.", status: "INVALID_ARGUMENT" } }));
});

test("an upstream refusal keeps its status, body and retry headers", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  for (const verb of ["generateContent", "streamGenerateContent?alt=sse"]) {
    const answer = await post(`/v1beta/models/busy-gemini:${verb}`, body);
    expect(answer.status).toBe(429);
    expect(answer.headers.get("retry-after")).toBe("17");
    expect(await answer.text()).toBe(RETRY_BODY);
  }
});

test("an error event inside the stream reaches the client as Gemini sent it, after what came before it", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  const answer = await post("/v1beta/models/failing-gemini:streamGenerateContent?alt=sse", body);
  expect(answer.status).toBe(200);
  expect(await answer.text()).toBe(MID_STREAM);
});

test("@google/genai: a streamed tool loop reaches Gemini as the SDK sends it, the answer's bytes as Gemini sent them", async () => {
  const question: Content = { role: "user", parts: [{ text: "What is the weather in Paris? (carried)" }] };
  const config = {
    thinkingConfig: { includeThoughts: true },
    tools: [{ functionDeclarations: [{ name: "weather", parametersJsonSchema: { type: "object", properties: { location: { type: "string" } } } }] }],
  };
  const parts: Part[] = [];
  for await (const chunk of await sdk.models.generateContentStream({ model: UPSTREAM_MODEL, contents: [question], config }))
    parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
  const viaGateway = gemini.received.at(-1)!.raw;
  await direct.models.generateContent({ model: UPSTREAM_MODEL, contents: [question], config });
  // the SDK's body for the same call, sent to Gemini directly: generateContent and streamGenerateContent send the same body
  expect(viaGateway.equals(gemini.received.at(-1)!.raw)).toBe(true);

  const calls = parts.filter((part) => part.functionCall);
  expect(calls[0]!.thoughtSignature).toBeTruthy();
  expect(calls[0]!.thoughtSignature).not.toMatch(/^cd1\./);
  const next: Content[] = [
    question,
    { role: "model", parts },
    { role: "user", parts: calls.map((call) => ({ functionResponse: { name: "weather", id: call.functionCall!.id, response: { output: "sunny" } } })) },
  ];
  const second = await sdk.models.generateContent({ model: UPSTREAM_MODEL, contents: next, config });
  expect(gemini.received.at(-1)!.status).toBe(200);
  const secondBytes = gemini.received.at(-1)!.raw;
  expect(secondBytes.toString()).toContain('"response":{"output":"sunny"}');
  await direct.models.generateContent({ model: UPSTREAM_MODEL, contents: next, config });
  expect(secondBytes.equals(gemini.received.at(-1)!.raw)).toBe(true);
  expect(second.candidates?.[0]?.finishReason).toBe("STOP");
});

test("streamGenerateContent without alt=sse is asked so of Gemini, and its JSON array reaches the client as sent", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Say hello (array)." }] }] });
  const answer = await post(`/v1beta/models/gemini-3.8-flash:streamGenerateContent`, body);
  expect(answer.status).toBe(200);
  const sent = gemini.received.at(-1)!;
  expect(sent.path).toBe(`/v1beta/models/${UPSTREAM_MODEL}:streamGenerateContent`);
  expect(sent.raw.toString()).toBe(body);
  const chunks = (await answer.json()) as { candidates: { content: { parts: { text?: string }[] } }[]; modelVersion: string }[];
  expect(Array.isArray(chunks)).toBe(true);
  expect(chunks.flatMap((chunk) => chunk.candidates[0]!.content.parts.map((part) => part.text ?? "")).join("")).toBe("Hello.");
  expect(chunks[0]!.modelVersion).toBe(UPSTREAM_MODEL);
  // the turn read from the array is stored
  const history = (await (await gateway.fetch(`/v1/sessions/${answer.headers.get("x-session-id")!}`)).json()) as { turns: unknown[] };
  expect(history.turns).toHaveLength(1);
});

test("the SSE answer reaches the client as the upstream framed it", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Say hello (framing)." }] }] });
  const text = await (await post(`/v1beta/models/${UPSTREAM_MODEL}:streamGenerateContent?alt=sse`, body)).text();
  // the emulator ends each event with CRLF CRLF, as Google does; a re-rendered stream would not
  expect(text).toMatch(/^data: \{.*\}\r\n\r\n$/s);
  expect(text).toContain(`"modelVersion":"${UPSTREAM_MODEL}"`);
});

/** A first turn that calls the tool, through the gateway; its model content as the gateway's client got it. */
async function firstTurn(label: string): Promise<{ body: Record<string, unknown>; modelParts: Record<string, unknown>[]; session: string }> {
  const body = {
    contents: [{ role: "user", parts: [{ text: `Weather in Nice? (${label})` }] }],
    tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: "OBJECT", properties: { location: { type: "STRING" } } } }] }],
  };
  const answer = await post(`/v1beta/models/${UPSTREAM_MODEL}:generateContent`, JSON.stringify(body));
  expect(answer.status).toBe(200);
  const whole = (await answer.json()) as { candidates: { content: { parts: Record<string, unknown>[] } }[] };
  return { body, modelParts: whole.candidates[0]!.content.parts, session: answer.headers.get("x-session-id")! };
}

function withAnswers(first: { body: Record<string, unknown> }, modelParts: Record<string, unknown>[]): string {
  const calls = modelParts.filter((part) => part.functionCall);
  const answers = calls.map((part) => ({ functionResponse: { name: "weather", response: { output: "windy" }, id: (part.functionCall as { id: string }).id } }));
  const contents = [...(first.body.contents as unknown[]), { role: "model", parts: modelParts }, { role: "user", parts: answers }];
  return JSON.stringify({ ...first.body, contents });
}

test("a model turn whose thoughtSignature the client dropped gets the stored one back, and nothing else changes", async () => {
  const first = await firstTurn("dropped");
  const signature = first.modelParts.find((part) => part.functionCall)!.thoughtSignature as string;
  const dropped = first.modelParts.filter((part) => !part.thought).map(({ thoughtSignature: _, ...part }) => part);
  const sentBody = withAnswers(first, dropped);
  const answer = await post(`/v1beta/models/${UPSTREAM_MODEL}:generateContent`, sentBody, { "x-session-id": first.session });
  expect(answer.status).toBe(200);
  const upstream = gemini.received.at(-1)!.raw.toString();
  expect(upstream).toContain(`"thoughtSignature":${JSON.stringify(signature)}`);
  expect(upstream.replace(`,"thoughtSignature":${JSON.stringify(signature)}`, "")).toBe(sentBody);
});

test("carrierd's envelope in a thoughtSignature never reaches Gemini: the stored signature takes its place, or the skip value when none is stored", async () => {
  const first = await firstTurn("envelope");
  const signature = first.modelParts.find((part) => part.functionCall)!.thoughtSignature as string;
  const envelope = "cd1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  const swapped = first.modelParts.map((part) => (part.thoughtSignature === signature ? { ...part, thoughtSignature: envelope } : part));
  const sentBody = withAnswers(first, swapped);
  expect((await post(`/v1beta/models/${UPSTREAM_MODEL}:generateContent`, sentBody, { "x-session-id": first.session })).status).toBe(200);
  const upstream = gemini.received.at(-1)!.raw.toString();
  expect(upstream).not.toContain("cd1.");
  expect(upstream).toBe(sentBody.replace(JSON.stringify(envelope), JSON.stringify(signature)));

  // a model turn carrierd never stored (another route's, say): the envelope comes off, and Gemini 3's unsigned call gets the documented skip value
  const call = { functionCall: { name: "weather", args: { location: "Bern" }, id: "b3e4" }, thoughtSignature: envelope };
  const unknownBody = withAnswers({ body: { contents: [{ role: "user", parts: [{ text: "Weather in Bern? (never stored)" }] }] } }, [call]);
  expect((await post(`/v1beta/models/${UPSTREAM_MODEL}:generateContent`, unknownBody)).status).toBe(200);
  const sent = gemini.received.at(-1)!.raw.toString();
  expect(sent).not.toContain("cd1.");
  expect(sent).toBe(unknownBody.replace(JSON.stringify(envelope), JSON.stringify(SKIP)));
});
