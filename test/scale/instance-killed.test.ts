import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { Hold } from "../support/hold.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

/**
 * One of two gateway processes on one PostgreSQL store killed with SIGKILL
 * while a stream is under way: every turn any client saw complete is
 * there for the other instance, and the stream it was serving left nothing.
 */
announceSkipped("test/scale/instance-killed.test.ts", 1);
describe.skipIf(pgSkipReason() !== undefined)("an instance killed with kill -9 mid-stream", () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let upstream: OpenAIUpstream;
  const hold = new Hold();
  let home: string;
  beforeAll(async () => {
    schema = await freshSchema();
    upstream = await startOpenAIUpstream({ answers: { kind: "numbered" }, hold });
    home = mkdtempSync(join(tmpdir(), "carrierd-killed-"));
    writeFileSync(
      join(home, "routes.yaml"),
      `version: 1\nproviders:\n  local: { plugin: openai-compatible, base_url: "${upstream.baseUrl("compatible")}" }\nmodels:\n  - { name: "local/*", provider: local }\ncarriers:\n  - match: {}\n    fields: [reasoning_content]\n`,
    );
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(home, { recursive: true, force: true });
    await schema?.drop();
  });

  test("loses no turn a client saw complete, on any instance", async () => {
    const key = "k".repeat(32);
    const env = cleanEnv({ CARRIERD_API_KEY: key, CARRIERD_STORE: schema.url });
    const args = (name: string) => ["--home", join(home, name), "--routes", join(home, "routes.yaml"), "--port", "0"];
    const victim = await startGatewayProcess(args("a"), env);
    const survivor = await startGatewayProcess(args("b"), env);
    const post = (url: string, body: object) =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      const done: string[] = [];
      for (let index = 0; index < 5; index++) {
        const answer = await post(victim.url, { model: "local/m", stream: index % 2 === 1, messages: [{ role: "user", content: `Completed ${index}.` }] });
        expect(answer.status).toBe(200);
        const text = await answer.text();
        if (index % 2 === 1) expect(text).toContain("[DONE]");
        done.push(answer.headers.get("x-session-id")!);
      }
      hold.hold();
      const before = upstream.received.length;
      const streaming = await post(victim.url, { model: "local/m", stream: true, messages: [{ role: "user", content: "Killed mid-stream." }] });
      const cutSession = streaming.headers.get("x-session-id")!;
      await upstream.arrived(before + 1);
      victim.process.kill("SIGKILL");
      await streaming.text().catch(() => "");
      hold.release();

      const storage = await openPostgresStorage({ url: schema.url, poolSize: 1 });
      try {
        for (const sessionId of done) expect((await storage.sessions.show(sessionId))?.turns, sessionId).toBe(1);
        expect((await storage.sessions.show(cutSession))?.turns ?? 0).toBe(0);
      } finally {
        await storage.close();
      }
      // and the survivor replays them: its next turn of the first session finds it
      const next = await post(survivor.url, {
        model: "local/m",
        messages: [
          { role: "user", content: "Completed 0." },
          { role: "assistant", content: "Answer 1." },
          { role: "user", content: "More." },
        ],
      });
      expect(next.status).toBe(200);
      expect(next.headers.get("x-session-id")).toBe(done[0]);
    } finally {
      await survivor.stop();
      await victim.stop();
    }
  });
});
