import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { openEvents, type EventClient } from "../events/ws-client.js";
import { REDIS_URL, testRedis } from "../events-redis/redis-for-tests.js";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";
import { Hold } from "../support/hold.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { postgresBinDir, startOwnPostgresServer, type OwnPostgresServer } from "../support/own-postgres-server.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Three gateway processes on one PostgreSQL (a server of this test's own,
 * so it can be restarted) and one Redis stream: a conversation whose turns
 * rotate across the instances, a dashboard on the third seeing them all,
 * one instance killed with kill -9 mid-stream, and PostgreSQL restarted
 * while requests keep coming.
 */
const FILE = "test/scale/three-gateways.test.ts";
const noServer = postgresBinDir() ? undefined : "no PostgreSQL server binaries under /usr/lib/postgresql";
if (noServer && process.env.CI === "true") throw new Error(`${FILE} needs PostgreSQL's server binaries under CI: apt-get install postgresql`);
if (noServer) console.warn(`\n*** SKIPPING the tests of ${FILE}: ${noServer} ***\n`);
const redis = await testRedis(FILE, REDIS_URL, noServer);
const key = "t".repeat(40);

describe("three gateways, one PostgreSQL, one Redis", () => {
  let pg: OwnPostgresServer;
  let upstream: OpenAIUpstream;
  const hold = new Hold();
  let home: string;
  const gateways: RunningGateway[] = [];
  let dashboard: EventClient | undefined;

  beforeAll(async () => {
    if (!redis.available) return;
    pg = await startOwnPostgresServer();
    upstream = await startOpenAIUpstream({ answers: { kind: "numbered" }, hold });
    home = mkdtempSync(join(tmpdir(), "carrierd-three-"));
    writeFileSync(
      join(home, "routes.yaml"),
      `version: 1\nproviders:\n  local: { plugin: openai-compatible, base_url: "${upstream.baseUrl("compatible")}" }\nmodels:\n  - { name: "local/*", provider: local }\ncarriers:\n  - match: {}\n    fields: [reasoning_content]\n    must_echo: true\n`,
    );
    const env = cleanEnv({ CARRIERD_API_KEY: key, CARRIERD_STORE: pg.url, CARRIERD_EVENTS: REDIS_URL, CARRIERD_EVENTS_STREAM: redis.stream("three") });
    for (const name of ["a", "b", "c"])
      gateways.push(await startGatewayProcess(["--home", join(home, name), "--routes", join(home, "routes.yaml"), "--port", "0"], env));
    dashboard = await openEvents({ url: gateways[2]!.url, key });
    await dashboard.subscribe({ events: ["turn.started", "turn.completed"] });
  }, 60_000);

  afterAll(async () => {
    dashboard?.close();
    for (const gateway of gateways) await gateway.stop();
    await upstream?.close();
    await pg?.remove();
    if (home && existsSync(home)) rmSync(home, { recursive: true, force: true });
  });

  const post = (gateway: RunningGateway, body: object) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const completedOn = (sessionId: string) =>
    dashboard!.messages.filter((message) => message.type === "turn.completed" && message.session_id === sessionId).length;

  redis.test(
    "a conversation rotating A → B → C replays every turn's reasoning, and the dashboard on C sees all three turns",
    async () => {
      const [a, b, c] = gateways as [RunningGateway, RunningGateway, RunningGateway];
      const history: { role: string; content: string }[] = [{ role: "user", content: "First question." }];
      const sessions: string[] = [];
      for (const [index, gateway] of [a, b, c].entries()) {
        const stream = index !== 1;
        const answer = await post(gateway, { model: "local/m", stream, messages: history });
        expect(answer.status).toBe(200);
        const text = await answer.text();
        sessions.push(answer.headers.get("x-session-id")!);
        // what a stateless frontend keeps: the answer's text, no reasoning
        history.push({ role: "assistant", content: /Answer \d+\./.exec(text)![0] }, { role: "user", content: `Question ${index + 2}.` });
      }
      expect(new Set(sessions).size).toBe(1);
      // turn 3's upstream request, sent by C, carries what A and B stored, verbatim
      const third = upstream.received.at(-1)!.body.messages.filter((message) => message.role === "assistant");
      const sent = upstream.received.slice(-3);
      expect(third.map((message) => message.reasoning_content)).toEqual(
        sent.slice(0, 2).map((_, turn) => `Thinking ${upstream.received.length - 2 + turn} about ${turn === 0 ? "First question." : "Question 2."}.`),
      );
      await dashboard!.waitFor(() => completedOn(sessions[0]!) === 3, 10_000);
    },
    60_000,
  );

  redis.test(
    "an instance killed with kill -9 mid-stream: the dashboard saw its turn start, nothing of it is stored, the others serve on",
    async () => {
      const [a, b] = gateways as [RunningGateway, RunningGateway];
      hold.hold();
      const before = upstream.received.length;
      const streaming = await post(a, { model: "local/m", stream: true, messages: [{ role: "user", content: "Cut me off." }] });
      const cut = streaming.headers.get("x-session-id")!;
      await upstream.arrived(before + 1);
      await dashboard!.waitFor((message) => message.type === "turn.started" && message.session_id === cut, 10_000);
      a.process.kill("SIGKILL");
      await streaming.text().catch(() => "");
      hold.release();
      const storage = await openPostgresStorage({ url: pg.url, poolSize: 1 });
      try {
        expect((await storage.sessions.show(cut))?.turns ?? 0).toBe(0);
      } finally {
        await storage.close();
      }
      expect(completedOn(cut)).toBe(0);
      const next = await post(b, { model: "local/m", messages: [{ role: "user", content: "Still there?" }] });
      expect(next.status).toBe(200);
    },
    60_000,
  );

  /**
   * How long a wait for something the test caused (the outage seen, the
   * store back, answers completing) may take before it fails naming what it
   * waited for: each returns as soon as its event happens, and this bound is
   * there only so that a machine at a load of 8 is never what fails it.
   */
  const PATIENCE_MS = 90_000;

  /** What each serving instance's /health says of the store: "ok", "unavailable", or why it did not answer. */
  const storeSeenBy = async (gateway: RunningGateway): Promise<string> => {
    try {
      const body = (await (await fetch(`${gateway.url}/health`)).json()) as { store?: string };
      return body.store ?? "none";
    } catch (error) {
      return `no answer (${(error as Error).message})`;
    }
  };

  redis.test(
    "PostgreSQL restarted while a load runs: every answer is a 200 or a store_unavailable 503, every 200's turn is stored, and both instances recover",
    async () => {
      const serving = gateways.slice(1);
      const answered: { status: number; session: string | null; code?: string; failure?: string }[] = [];
      let running = true;
      const worker = async (gateway: RunningGateway, id: number) => {
        for (let n = 0; running; n++) {
          let answer: Response;
          let text: string;
          try {
            answer = await post(gateway, { model: "local/m", stream: n % 2 === 0, messages: [{ role: "user", content: `Load ${id}.${n}.` }] });
            text = await answer.text();
          } catch (error) {
            // a connection carrierd closed without an answer: recorded, so the assertions below name it with the gateway's log
            const cause = (error as Error & { cause?: Error }).cause;
            answered.push({ status: 0, session: null, failure: `${(error as Error).message}${cause ? ` (${cause.message})` : ""}` });
            continue;
          }
          // a stream that began before the outage may end with an error event (store_unavailable) instead of its last chunk: not a completed turn
          const complete = answer.status === 200 && (n % 2 === 1 || (text.includes('"finish_reason":"stop"') && !text.includes('"error":')));
          answered.push({
            status: complete ? 200 : answer.status === 200 ? -1 : answer.status,
            session: answer.headers.get("x-session-id"),
            code: answer.status === 503 ? (JSON.parse(text) as { error: { code: string } }).error.code : undefined,
          });
        }
      };
      const load = serving.flatMap((gateway, index) => [worker(gateway, index * 2), worker(gateway, index * 2 + 1)]);
      const complete = () => answered.filter((answer) => answer.status === 200).length;
      const until = (count: number) => waitFor(() => complete() >= count, { timeoutMs: PATIENCE_MS, intervalMs: 20, what: `${count} complete answers` });
      await until(10);
      await pg.stop();
      // down until the gateways have refused a request for it (503), however long a loaded machine takes to get there
      await waitFor(() => answered.some((answer) => answer.status === 503), { timeoutMs: PATIENCE_MS, intervalMs: 20, what: "a 503 while the store is down" });
      await pg.start();
      const afterRestart = answered.length;
      // back when every instance sees the store again (its /health probes it), not after some time
      for (const gateway of serving)
        await waitFor(async () => (await storeSeenBy(gateway)) === "ok", {
          timeoutMs: PATIENCE_MS,
          intervalMs: 50,
          what: `${gateway.url} seeing the store again`,
        });
      await until(complete() + 10);
      running = false;
      await Promise.all(load);

      const logs = () => serving.map((gateway) => gateway.stdout().slice(-3000)).join("\n---\n");
      // no connection closed without an answer
      expect(
        answered.filter((answer) => answer.status === 0).map((answer) => answer.failure),
        logs(),
      ).toEqual([]);
      // the outage was seen (the store was really gone), and nothing else than it
      expect(answered.some((answer) => answer.status === 503)).toBe(true);
      for (const answer of answered) expect([200, 503, -1]).toContain(answer.status);
      for (const answer of answered.filter((entry) => entry.status === 503)) expect(answer.code).toBe("store_unavailable");
      expect(answered.slice(afterRestart).some((answer) => answer.status === 200)).toBe(true);
      const storage = await openPostgresStorage({ url: pg.url, poolSize: 1 });
      try {
        for (const answer of answered.filter((entry) => entry.status === 200))
          expect((await storage.sessions.show(answer.session!))?.turns, answer.session!).toBe(1);
        // a stream cut short by the outage left no half-written turn
        for (const answer of answered.filter((entry) => entry.status === -1))
          expect((await storage.sessions.show(answer.session!))?.turns ?? 0, answer.session!).toBe(0);
      } finally {
        await storage.close();
      }
      for (const gateway of serving) expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    },
    4 * PATIENCE_MS + 30_000,
  );
});
