import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, onTestFinished, test } from "vitest";
import { carrierd, cleanEnv, startGatewayProcess } from "./cli-process.js";

const home = mkdtempSync(join(tmpdir(), "carrierd-oplogs-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("piped stdout is JSON on every line, with one access-log line per request (no bodies) and /favicon.ico without a key", async () => {
  const gateway = await startGatewayProcess(["--port", "0"], cleanEnv({ CARRIERD_HOME: join(home, "piped"), CARRIERD_API_KEY: "k-0123456789abcdef0123" }));
  onTestFinished(() => void gateway.stop());
  const favicon = await fetch(`${gateway.url}/favicon.ico`);
  expect(favicon.status).toBe(204);
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer k-0123456789abcdef0123", "content-type": "application/json", "x-session-id": "oplog-1" },
    body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "What is the secret-word?" }] }),
  });
  expect(answer.status).toBe(200);
  await answer.text();
  await gateway.waitFor(/"path":"\/v1\/chat\/completions"/);
  expect(await gateway.stop()).toBe(0);

  const lines = gateway
    .stdout()
    .split("\n")
    .filter((line) => line.trim());
  for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(records.some((record) => typeof record.msg === "string" && record.msg.startsWith("carrierd listening on http://"))).toBe(true);
  const access = records.find((record) => record.msg === "request" && record.path === "/v1/chat/completions");
  expect(access).toMatchObject({
    level: 30,
    method: "POST",
    model: "demo",
    status: 200,
    session_id: "oplog-1",
    upstream_attempts: 1,
    duration_ms: expect.any(Number),
  });
  expect(gateway.stdout()).not.toContain("secret-word");
});

test("a port already in use fails at once with one line naming --port and CARRIERD_PORT", async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => void blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const result = await carrierd(["gateway", "--port", String(port)], {
    env: cleanEnv({ CARRIERD_HOME: join(home, "busy"), CARRIERD_API_KEY: "k-0123456789abcdef0123" }),
  });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
  expect(result.stderr).toMatch(/--port N or CARRIERD_PORT=N/);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
});
