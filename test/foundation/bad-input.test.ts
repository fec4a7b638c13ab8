import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

const MIB = 1024 * 1024;
const user = [{ role: "user", content: "hi" }];

/** Sends raw bytes with the key, over plain node:http so nothing rewrites the body or its headers. */
function send(body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json", ...headers },
    });
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: text }));
    });
    // a server that answers 413 early may close before the upload ends; the answer already arrived
    request.on("error", (error) => (request.writableEnded ? undefined : reject(error)));
    request.end(body);
  });
}

function json(value: unknown, headers?: Record<string, string>) {
  return send(JSON.stringify(value), headers);
}

function expectOpenAIError(result: { status: number; body: string }, status: number): { message: string; param: string | null; code: string } {
  expect(result.status).toBe(status);
  const { error } = JSON.parse(result.body) as { error: { message: string; type: string; param: string | null; code: string } };
  expect(Object.keys(error).sort()).toEqual(["code", "message", "param", "type"]);
  return error;
}

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe("bad inputs are 4xx in OpenAI shape", () => {
  test("an unknown role is 400", async () => {
    const error = expectOpenAIError(await json({ model: "demo", messages: [{ role: "wizard", content: "hi" }] }), 400);
    expect(error.param).toBe("messages[0].role");
  });

  test("empty messages is 400", async () => {
    expectOpenAIError(await json({ model: "demo", messages: [] }), 400);
  });

  test("a content part of unknown type is 400", async () => {
    const error = expectOpenAIError(await json({ model: "demo", messages: [{ role: "user", content: [{ type: "hologram", data: "x" }] }] }), 400);
    expect(error.param).toBe("messages[0].content[0].type");
    expect(error.message).toContain("'text'");
  });

  test.each([
    ["stream", "yes"],
    ["temperature", "hot"],
    ["max_tokens", 1.5],
    ["messages", "hi"],
    ["model", 42],
    ["tools", { type: "function" }],
    ["stream_options", "include"],
  ])("%s with the wrong type is 400 naming it", async (key, value) => {
    const error = expectOpenAIError(await json({ model: "demo", messages: user, [key]: value }), 400);
    expect(error.param ?? "").toContain(key);
  });

  test("n above 1 is 400: one turn, one choice, nothing dropped silently", async () => {
    const error = expectOpenAIError(await json({ model: "demo", messages: user, n: 2 }), 400);
    expect(error.param).toBe("n");
    expect((await json({ model: "demo", messages: user, n: 1 })).status).toBe(200);
  });

  test("a missing model is 400", async () => {
    expectOpenAIError(await json({ messages: user }), 400);
  });

  test("invalid UTF-8 is 400", async () => {
    const bytes = Buffer.concat([Buffer.from('{"model":"demo","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}]}')]);
    const error = expectOpenAIError(await send(bytes), 400);
    expect(error.message).toMatch(/UTF-8/);
  });

  test("JSON nested 64 levels is accepted, 65 is 400", async () => {
    // the body object is level 1, so 63 arrays under one of its keys make 64 levels
    const ok = await json({ model: "demo", messages: user, metadata: undefined, user: "u", deep: nested(63) });
    expect(ok.status).toBe(200);
    const error = expectOpenAIError(await json({ model: "demo", messages: user, deep: nested(64) }), 400);
    expect(error.message).toMatch(/deeper than 64/);
  });

  test("very deep JSON (100k levels) is a 400, not a stack overflow", async () => {
    expectOpenAIError(await send(`{"model":"demo","messages":[],"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`), 400);
  });

  test.each(["compress", "zstd", "gzip, br"])("Content-Encoding %s is 400", async (encoding) => {
    const error = expectOpenAIError(await send(JSON.stringify({ model: "demo", messages: user }), { "content-encoding": encoding }), 400);
    expect(error.code).toBe("unsupported_encoding");
  });

  test("a gzip body is read", async () => {
    const result = await send(gzipSync(JSON.stringify({ model: "demo", messages: user })), { "content-encoding": "gzip" });
    expect(result.status).toBe(200);
  });

  test("a corrupt gzip body is 400", async () => {
    expectOpenAIError(await send(Buffer.from("not gzip at all"), { "content-encoding": "gzip" }), 400);
  });

  test("a body over 10 MiB is 413; exactly 10 MiB is not", async () => {
    const padded = (size: number) => {
      const head = JSON.stringify({ model: "demo", messages: user, pad: "" }).slice(0, -2);
      return `${head}${"a".repeat(size - head.length - 2)}"}`;
    };
    expect(Buffer.byteLength(padded(10 * MIB))).toBe(10 * MIB);
    expect((await send(padded(10 * MIB))).status).toBe(200);
    expectOpenAIError(await send(padded(10 * MIB + 1)), 413);
  });

  test("a body over 10 MiB without Content-Length (chunked) is 413", async () => {
    const result = await send(Buffer.alloc(10 * MIB + 1, 0x20), { "transfer-encoding": "chunked" });
    expectOpenAIError(result, 413);
  });

  test("a small gzip that inflates past 10 MiB is 413", async () => {
    const bomb = gzipSync(`{"model":"demo","messages":[],"pad":"${"a".repeat(11 * MIB)}"}`);
    expect(bomb.length).toBeLessThan(MIB);
    expectOpenAIError(await send(bomb, { "content-encoding": "gzip" }), 413);
  });

  test("an unknown model is 404", async () => {
    const error = expectOpenAIError(await json({ model: "no-such-model", messages: user }), 404);
    expect(error.code).toBe("model_not_found");
    expect(error.param).toBe("model");
  });

  test.each(["", "has space", "x".repeat(129), "semi;colon", "ünïcode", "a/b"])("X-Session-Id %j is 400", async (id) => {
    expectOpenAIError(await json({ model: "demo", messages: user }, { "x-session-id": id }), 400);
  });

  test("a well-formed X-Session-Id is accepted and echoed", async () => {
    const response = await gateway.post("/v1/chat/completions", { model: "demo", messages: user }, { "x-session-id": "my.session:01-A_b" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-session-id")).toBe("my.session:01-A_b");
  });
});

/** Malformed bodies of every kind: none may produce a 5xx, and the server must keep serving. */
const MALFORMED: (string | Buffer)[] = [
  "",
  " ",
  "null",
  "[]",
  "42",
  '"just a string"',
  "{",
  '{"model":',
  "{'model':'demo'}",
  '{"model":"demo","messages":[null]}',
  '{"model":"demo","messages":[{}]}',
  '{"model":"demo","messages":[{"role":"user","content":{}}]}',
  '{"model":"demo","messages":[{"role":"user","content":[null]}]}',
  '{"model":"demo","messages":[{"role":"user","content":[{"type":"text","text":5}]}]}',
  '{"model":"demo","messages":[{"role":"assistant","tool_calls":[{}]}]}',
  '{"model":"demo","messages":[{"role":"assistant","tool_calls":"x"}]}',
  '{"model":"demo","messages":[{"role":"tool","content":"no id"}]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":[null]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":5}}]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"model_options":{"reasoning":"off"}}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"n":0}',
  '{"model":"demo","messages":[{"role":"user","content":"\\ud800"}]}',
  '{"__proto__":{"admin":true},"model":"demo","messages":[{"role":"user","content":"hi"}]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi","constructor":{"prototype":{}}}]}',
  '{"model":"demo","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":"yes"}}',
  `{"model":"${"m".repeat(10_000)}","messages":[{"role":"user","content":"hi"}]}`,
  Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"model":"demo","messages":[{"role":"user","content":"hi"}]}')]),
  Buffer.from([0x00, 0x01, 0x02, 0xff]),
];

test.each(MALFORMED.map((body, index) => [index, body] as const))("malformed body #%i is a 4xx (or served), never a 5xx", async (_index, body) => {
  const result = await send(body);
  expect(result.status).toBeLessThan(500);
  if (result.status >= 400) expect(JSON.parse(result.body)).toHaveProperty("error.message");
  const health = await fetch(`${gateway.url}/health`);
  expect(health.status).toBe(200);
});

test("after all that, the demo still answers", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "What is 6*7?" }] });
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  expect(body.choices[0]!.message.content).toContain("42");
});
