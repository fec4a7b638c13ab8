import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "./cli-process.js";

/**
 * A refused request says why in the log: the access-log line (info) of
 * every error carrierd answers carries its `error_code` and `error_message`,
 * and the model when the body named one, even when the body was refused.
 * Read from a real gateway process's stdout.
 */
const KEY = "k-refusals-0123456789abcdef";
const home = mkdtempSync(join(tmpdir(), "carrierd-refusals-"));
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGatewayProcess(["--port", "0"], cleanEnv({ CARRIERD_HOME: home, CARRIERD_API_KEY: KEY }));
});
afterAll(async () => {
  await gateway?.stop();
  rmSync(home, { recursive: true, force: true });
});

type LogRecord = Record<string, unknown>;

function accessLines(): LogRecord[] {
  return gateway
    .stdout()
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as LogRecord)
    .filter((record) => record.msg === "request");
}

/** Sends a request, waits for its access-log line, returns it with the error body and status the client got. */
async function refused(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<{ line: LogRecord; error: LogRecord; status: number }> {
  const before = accessLines().length;
  const response = await fetch(`${gateway.url}${path}`, init);
  const { error } = (await response.json()) as { error: LogRecord };
  await waitUntil(() => accessLines().length > before);
  const line = accessLines()
    .slice(before)
    .find((record) => record.path === path);
  expect(line, `no access-log line for ${path}`).toBeDefined();
  return { line: line!, error, status: response.status };
}

/** The access-log line is written when the response has finished, a moment after the client read it. */
async function waitUntil(condition: () => boolean): Promise<void> {
  await waitFor(condition, { what: "a new access-log line" }).catch((error: Error) => {
    throw new Error(`${error.message}:\n${gateway.stdout().slice(-2000)}`);
  });
}

const authorized = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

test("bad JSON: 400 invalid_json, with its message on the info line", async () => {
  const { line, error, status } = await refused("/v1/chat/completions", { method: "POST", headers: authorized, body: '{"model":"demo",' });
  expect(status).toBe(400);
  expect(line).toMatchObject({ level: 30, method: "POST", status: 400, model: null, error_code: "invalid_json", error_message: error.message });
});

test("an unknown model: 404 model_not_found, naming the model", async () => {
  const body = JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] });
  const { line, error, status } = await refused("/v1/chat/completions", { method: "POST", headers: authorized, body });
  expect(status).toBe(404);
  expect(line).toMatchObject({ level: 30, status: 404, model: "no-such-model", error_code: "model_not_found", error_message: error.message });
  expect(line.error_message).toContain("no-such-model");
});

test("a body that fails validation still logs the model it named", async () => {
  const { line, status } = await refused("/v1/chat/completions", {
    method: "POST",
    headers: authorized,
    body: JSON.stringify({ model: "demo", messages: "hi" }),
  });
  expect(status).toBe(400);
  expect(line).toMatchObject({ model: "demo", error_code: "invalid_request" });
  expect(line.error_message).toMatch(/messages/);
});

test("Responses API: a refused request logs its code, message and model", async () => {
  const body = JSON.stringify({ model: "demo", input: "x", background: true });
  const { line, error } = await refused("/v1/responses", { method: "POST", headers: authorized, body });
  expect(line).toMatchObject({ status: 400, model: "demo", error_code: "invalid_request", error_message: error.message });
});

test("Messages API: a body that fails validation, and a count_tokens body that does, log the model they named", async () => {
  const messages = await refused("/v1/messages", {
    method: "POST",
    headers: authorized,
    body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(messages.status).toBe(400);
  expect(messages.line).toMatchObject({ status: 400, model: "demo", error_code: "invalid_request", error_message: messages.error.message });
  const count = await refused("/v1/messages/count_tokens", { method: "POST", headers: authorized, body: JSON.stringify({ model: "demo", messages: "hi" }) });
  expect(count.line).toMatchObject({ status: 400, model: "demo", error_message: count.error.message });
});

test("refused before the body is read (no key, an unknown path, a bad X-Session-Id), the line still names the model the body named", async () => {
  const body = JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] });
  const unauthorized = await refused("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body });
  expect(unauthorized.line).toMatchObject({ status: 401, model: "demo", error_code: "invalid_api_key" });
  const nowhere = await refused("/v1/chat/completion", { method: "POST", headers: authorized, body });
  expect(nowhere.line).toMatchObject({ status: 404, model: "demo", error_code: "not_found" });
  const session = await refused("/v1/messages", { method: "POST", headers: { ...authorized, "x-session-id": "bad id with spaces" }, body });
  expect(session.line).toMatchObject({ status: 400, model: "demo", error_code: "invalid_session_id" });
  // and one that names none logs none
  const plain = await refused("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: '{"messages":[]}' });
  expect(plain.line).toMatchObject({ status: 401, model: null });
});

test("missing auth: 401 invalid_api_key, the reason on the line", async () => {
  const { line, error, status } = await refused("/v1/models", { method: "GET" });
  expect(status).toBe(401);
  expect(line).toMatchObject({ level: 30, method: "GET", status: 401, error_code: "invalid_api_key" });
  // the logger masks anything after "Bearer", even the placeholder of the message's hint
  expect(line.error_message).toBe((error.message as string).replace("Bearer <key>", "Bearer [redacted]"));
});

test("an invalid X-Session-Id: 400 invalid_session_id", async () => {
  const body = JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] });
  const { line, error, status } = await refused("/v1/chat/completions", {
    method: "POST",
    headers: { ...authorized, "x-session-id": "bad id with spaces" },
    body,
  });
  expect(status).toBe(400);
  expect(line).toMatchObject({ status: 400, error_code: "invalid_session_id", error_message: error.message });
});

test("an unknown path and a plain GET of the WebSocket endpoint log theirs too", async () => {
  const missing = await refused("/v1/nowhere", { method: "GET", headers: authorized });
  expect(missing.line).toMatchObject({ status: 404, error_code: "not_found", error_message: missing.error.message });
  const plain = await refused("/v1/events", { method: "GET", headers: authorized });
  expect(plain.line).toMatchObject({ status: 426, error_code: "upgrade_required", error_message: plain.error.message });
});

test("a request Node cannot parse is answered 400 and logged with its reason", async () => {
  const before = accessLines().length;
  const answer = await rawExchange("NOT A REQUEST\r\n\r\n");
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  await waitUntil(() => accessLines().length > before);
  expect(accessLines().slice(before)).toContainEqual(
    expect.objectContaining({ level: 30, status: 400, error_code: "invalid_request", error_message: "malformed HTTP request: bad request" }),
  );
});

/** Writes raw bytes to the gateway and reads until it closes the connection. */
function rawExchange(bytes: string): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

test("a refused WebSocket upgrade is logged, and answered with the error table's status and type", async () => {
  const before = accessLines().length;
  const answer = await rawExchange(
    "GET /v1/events HTTP/1.1\r\nHost: carrierd\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer not-a-key\r\n\r\n",
  );
  expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  const { error } = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
  await waitUntil(() => accessLines().length > before);
  expect(accessLines().slice(before)).toContainEqual(
    expect.objectContaining({ level: 30, method: "GET", path: "/v1/events", status: 401, error_code: "invalid_api_key", error_message: error.message }),
  );
});

test("a served request carries no error fields", async () => {
  const before = accessLines().length;
  const response = await fetch(`${gateway.url}/v1/models`, { headers: authorized });
  expect(response.status).toBe(200);
  await response.text();
  await waitUntil(() => accessLines().length > before);
  const line = accessLines().slice(before)[0]!;
  expect(line).toMatchObject({ path: "/v1/models", status: 200 });
  expect(line).not.toHaveProperty("error_code");
  expect(line).not.toHaveProperty("error_message");
});
