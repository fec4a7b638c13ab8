import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "./routes.js";

// an X-Session-Id outside [A-Za-z0-9._:-]{1,128} is a 400 wherever it appears (docs/api.md#sessions-x-session-id).
let upstream: FaultInjector;
let gateway: TestGateway;
let previousId: string;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({ routes: faultRoutes(upstream.baseUrl()) });
  const created = await gateway.post("/v1/responses", { model: "ok", stream: true, input: "2+2?", conversation: "conv-valid" });
  const raw = await created.text();
  expect(raw).toContain("response.completed");
  previousId = /"id":"(resp_[^"]+)"/.exec(raw)![1]!;
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const BAD = ["has space", "semi;colon", "x".repeat(129), "ünïcode"];

async function expectBadSessionId(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: { code: string; param: string; type: string } };
  expect(body.error).toMatchObject({ code: "invalid_session_id", param: "X-Session-Id", type: "invalid_request_error" });
}

test("with previous_response_id, an invalid X-Session-Id is a 400, not ignored", async () => {
  const good = await gateway.post(
    "/v1/responses",
    { model: "ok", stream: true, input: "and 3+3?", previous_response_id: previousId },
    { "x-session-id": "fine-id" },
  );
  expect(good.status).toBe(200);
  await good.text();
  for (const bad of BAD.slice(0, 3)) {
    await expectBadSessionId(
      await gateway.post("/v1/responses", { model: "ok", stream: true, input: "and 3+3?", previous_response_id: previousId }, { "x-session-id": bad }),
    );
  }
});

test("with conversation, an invalid X-Session-Id is a 400", async () => {
  await expectBadSessionId(await gateway.post("/v1/responses", { model: "ok", input: "hi", conversation: "conv-valid" }, { "x-session-id": "bad id" }));
});

test("on chat completions and on every other route too", async () => {
  await expectBadSessionId(
    await gateway.post("/v1/chat/completions", { model: "ok", messages: [{ role: "user", content: "hi" }] }, { "x-session-id": "bad id" }),
  );
  await expectBadSessionId(await gateway.fetch("/v1/models", { headers: { "x-session-id": "bad id" } }));
  await expectBadSessionId(await gateway.fetch(`/v1/responses/${previousId}`, { headers: { "x-session-id": "bad id" } }));
});

test("a non-ASCII X-Session-Id is a 400 too", async () => {
  // fetch refuses non-Latin-1 header values; send its UTF-8 bytes as Latin-1, as a raw client would
  const latin1 = Buffer.from(BAD[3]!, "utf8").toString("latin1");
  await expectBadSessionId(await gateway.fetch("/v1/models", { headers: { "x-session-id": latin1 } }));
});
