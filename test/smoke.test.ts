import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "./support/gateway.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

test("the demo streams reasoning before content, then [DONE]", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+3?" }] });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-session-id")).toMatch(/^[A-Za-z0-9._:-]+$/);
  const { events, done } = await readSse(response);
  expect(done).toBe(true);
  const deltas = events.map((event) => (event as { choices: { delta: Record<string, string> }[] }).choices[0]!.delta);
  const firstContent = deltas.findIndex((delta) => delta.content);
  const lastReasoning = deltas.findLastIndex((delta) => delta.reasoning_content);
  expect(lastReasoning).toBeGreaterThan(0);
  expect(firstContent).toBeGreaterThan(lastReasoning);
  expect(deltas.map((delta) => delta.content ?? "").join("")).toContain("5");
});
