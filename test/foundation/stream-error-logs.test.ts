import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { waitFor } from "../support/wait-for.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { RATE_LIMITED, startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "../faults/routes.js";

/**
 * An error that reaches the client inside a stream (the status was already
 * 200) or from the upstream is on the request's access-log line too: its
 * code and message, beside the model.
 */
let upstream: FaultInjector;
let gateway: TestGateway;
let log: CapturedLog;

beforeAll(async () => {
  upstream = await startFaultInjector();
  log = captureLog();
  gateway = await startTestGateway({ routes: faultRoutes(upstream.baseUrl()), log: log.logger });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** The access-log line of the request that carried `sessionId`, once written (after the response ended). */
async function accessLine(sessionId: string): Promise<Record<string, unknown>> {
  const line = await waitFor(() => log.lines.find((entry) => entry.message === "request" && entry.object.session_id === sessionId), {
    what: `the access-log line for ${sessionId}`,
  });
  return line.object;
}

test("chat completions: a stream cut off upstream logs 200 with upstream_stream_truncated", async () => {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model: "cut", stream: true, messages: [{ role: "user", content: "2+2?" }] },
    { "x-session-id": "log-cut" },
  );
  expect(response.status).toBe(200);
  const { events } = await readSse(response);
  const error = (events.at(-1) as { error: { code: string; message: string } }).error;
  expect(error.code).toBe("upstream_stream_truncated");
  expect(await accessLine("log-cut")).toMatchObject({ status: 200, model: "cut", error_code: "upstream_stream_truncated", error_message: error.message });
});

test("Responses API: a stream cut off upstream logs its error code too", async () => {
  const response = await gateway.post("/v1/responses", { model: "cut", stream: true, input: "2+2?" }, { "x-session-id": "log-cut-responses" });
  expect(response.status).toBe(200);
  await readSse(response);
  expect(await accessLine("log-cut-responses")).toMatchObject({ status: 200, model: "cut", error_code: "upstream_stream_truncated" });
});

test("an upstream's own 429 is logged with the upstream's code and message", async () => {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model: "rate-limit", messages: [{ role: "user", content: "hi" }] },
    { "x-session-id": "log-429" },
  );
  expect(response.status).toBe(429);
  const { error } = (await response.json()) as { error: { message: string } };
  expect(await accessLine("log-429")).toMatchObject({ status: 429, model: "rate-limit", error_code: "rate_limit_exceeded", error_message: error.message });
  expect(error.message).toBe(RATE_LIMITED);
});
