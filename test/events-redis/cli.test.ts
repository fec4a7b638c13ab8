import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, onTestFinished, test } from "vitest";
import WebSocket from "ws";
import { carrierd, cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { REDIS_URL, testRedis } from "./redis-for-tests.js";

const redis = await testRedis("test/events-redis/cli.test.ts");
const home = mkdtempSync(join(tmpdir(), "carrierd-events-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const KEY = "events-cli-key-0123456789";
const SECRET = "not-a-real-redis-password-42";

redis.test(
  "two daemons started with --events share their events; the password is in no log line, no answer",
  async () => {
    const url = REDIS_URL.replace("://", `://:${SECRET}@`);
    const env = (name: string) => cleanEnv({ CARRIERD_HOME: join(home, name), CARRIERD_API_KEY: KEY, CARRIERD_EVENTS_STREAM: redis.stream("cli") });
    const a = await startGatewayProcess(["--port", "0", "--events", url], env("a"));
    onTestFinished(() => void a.stop());
    const b = await startGatewayProcess(["--port", "0"], { ...env("b"), CARRIERD_EVENTS: url });
    onTestFinished(() => void b.stop());

    const ws = new WebSocket(`${b.url.replace(/^http/, "ws")}/v1/events`, { headers: { authorization: `Bearer ${KEY}` } });
    const completed = new Promise<Record<string, unknown>>((resolve) =>
      ws.on("message", (data) => {
        const message = JSON.parse(data.toString()) as Record<string, unknown>;
        if (message.type === "turn.completed") resolve(message);
      }),
    );
    await new Promise((resolve) => ws.once("open", resolve));
    const response = await fetch(`${a.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-session-id": "cli-events" },
      body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(await completed).toMatchObject({ session_id: "cli-events", event_id: expect.stringMatching(/^\d+-\d+:\d+$/) });
    ws.close();

    const capabilities = await (await fetch(`${a.url}/v1/capabilities`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    expect(capabilities).toContain('"backend":"redis"');
    expect(capabilities).not.toContain(SECRET);
    expect(a.stdout()).toMatch(/events: shared through the Redis stream/);
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);
    for (const name of ["a", "b"]) {
      const logs = join(home, name, "logs");
      const written = readdirSync(logs)
        .map((file) => readFileSync(join(logs, file), "utf8"))
        .join("");
      expect(written).toContain("events: shared through the Redis stream");
      expect(written).not.toContain(SECRET);
    }
    expect(a.stdout() + b.stdout()).not.toContain(SECRET);
  },
  30_000,
);

test("an events setting that is neither local nor a Redis URL stops the start with one line, credentials masked", async () => {
  const result = await carrierd(["gateway", "--port", "0", "--events", `postgres://user:${SECRET}@db/x`], {
    env: cleanEnv({ CARRIERD_HOME: join(home, "bad") }),
  });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("invalid events setting");
  expect(result.stderr + result.stdout).not.toContain(SECRET);
});
