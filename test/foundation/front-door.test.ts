import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

const ALLOWED = "https://chat.example.com";
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES, corsOrigins: [ALLOWED] });
});
afterAll(() => gateway.stop());

const chatBody = JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] });

async function expectOpenAIError(response: Response, status: number, code?: string): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(typeof body.error.message).toBe("string");
  if (code) expect(body.error.code).toBe(code);
}

describe("auth", () => {
  test.each([
    ["no Authorization header", {}],
    ["a wrong key", { authorization: "Bearer not-the-key" }],
    ["the key with a suffix", { authorization: `Bearer ${"test-key-0123456789abcdef"}x` }],
    ["the key without Bearer", { authorization: "test-key-0123456789abcdef" }],
    ["Basic auth", { authorization: "Basic dGVzdDp0ZXN0" }],
  ])("%s → 401 in OpenAI shape", async (_label, headers) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      body: chatBody,
      headers: { "content-type": "application/json", ...headers },
    });
    await expectOpenAIError(response, 401, "invalid_api_key");
  });

  test.each(["/v1/models", "/v1/capabilities", "/v1/no-such-route"])("GET %s needs the key too", async (path) => {
    await expectOpenAIError(await fetch(`${gateway.url}${path}`), 401);
  });

  test("the right key is accepted, whatever the case of 'Bearer'", async () => {
    const response = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `bearer ${gateway.key}` } });
    expect(response.status).toBe(200);
  });

  test("/health answers without a key and says nothing more than ok", async () => {
    const response = await fetch(`${gateway.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });
});

describe("CORS", () => {
  test("an allowlisted origin gets CORS headers on a real request", async () => {
    const response = await gateway.fetch("/v1/models", { headers: { origin: ALLOWED } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("vary")).toMatch(/Origin/);
    expect(response.headers.get("access-control-expose-headers")).toMatch(/X-Session-Id/i);
    expect(response.headers.get("access-control-expose-headers")).toMatch(/X-Carrierd-Tools-Omitted/i);
  });

  test("an allowlisted preflight is answered 204 without a key", async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: ALLOWED, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("access-control-allow-methods")).toMatch(/POST/);
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toMatch(/authorization.*content-type/);
  });

  test("another origin gets no CORS headers, and its preflight is refused", async () => {
    const other = "https://evil.example.net";
    const response = await gateway.fetch("/v1/models", { headers: { origin: other } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.headers.get("vary")).toMatch(/Origin/);
    const preflight = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: other, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("an origin that merely contains an allowed one is not allowed", async () => {
    const response = await gateway.fetch("/v1/models", { headers: { origin: `${ALLOWED}.evil.io` } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("routing", () => {
  test("a known path with the wrong method is 405", async () => {
    await expectOpenAIError(await gateway.fetch("/v1/chat/completions"), 405);
  });

  test("an unknown path is 404", async () => {
    await expectOpenAIError(await gateway.fetch("/v1/nothing-here"), 404);
  });
});

/** Writes raw bytes to the gateway's port and returns everything it answers before closing. */
function rawExchange(bytes: string): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("requests Node's HTTP parser refuses", () => {
  test("a garbage request line gets a 400 in OpenAI shape, not a dropped connection", async () => {
    const answer = await rawExchange("BREW /pot HTCPCP/1.0\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toHaveProperty("error.type", "invalid_request_error");
  });

  test("oversized headers get a 431", async () => {
    const answer = await rawExchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
  });

  test("the server keeps serving afterwards", async () => {
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });
});
