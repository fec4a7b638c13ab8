import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { DEMO_ROUTES } from "../support/gateway.js";
import { waitFor } from "../support/wait-for.js";

const home = mkdtempSync(join(tmpdir(), "carrierd-crash-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const KEY = "crash-test-key-0123456789";

/** Asks for turns back to back until the gateway goes away; returns the ids of the turns whose answer arrived whole (counted in `answered` as they arrive). */
async function askUntilGone(url: string, client: number, answered: { count: number }): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; ; i++) {
    try {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: `client ${client}, question ${i}: what is 2+3?` }] }),
      });
      const body = (await response.json()) as { id: string };
      if (response.status === 200) {
        seen.push(`turn_${body.id.slice("chatcmpl-".length)}`);
        answered.count++;
      }
    } catch {
      return seen; // killed mid-request: that turn was never seen complete
    }
  }
}

test("every turn a client saw complete is in state.db after the gateway is killed (SIGKILL) and restarted, four times", async () => {
  const routes = join(home, "routes.yaml");
  writeFileSync(routes, DEMO_ROUTES);
  const args = ["--port", "0", "--home", join(home, "state"), "--routes", routes];
  const env = cleanEnv({ CARRIERD_API_KEY: KEY });
  const seen: string[] = [];
  for (let crash = 0; crash < 4; crash++) {
    const gateway = await startGatewayProcess(args, env);
    // one client: every turn completes alone and is journaled; four: turns also share commits
    const answered = { count: 0 };
    const clients = (crash % 2 === 0 ? [0] : [0, 1, 2, 3]).map((client) => askUntilGone(gateway.url, client, answered));
    // killed at some point in a stream of answers and commits: after a number of answers that differs from crash to crash
    await waitFor(() => answered.count >= 6 + 3 * crash, { timeoutMs: 15_000, intervalMs: 1, what: `${6 + 3 * crash} answers` });
    gateway.process.kill("SIGKILL");
    for (const ids of await Promise.all(clients)) seen.push(...ids);
    await gateway.stop();
  }
  expect(seen.length).toBeGreaterThan(20);
  // a clean start commits whatever the last process journaled and had not committed yet
  const restarted = await startGatewayProcess(args, env);
  expect(await restarted.stop()).toBe(0);
  const db = new Database(join(home, "state", "state.db"), { readonly: true });
  const stored = new Set(db.prepare("SELECT id FROM turns").pluck().all() as string[]);
  db.close();
  expect(seen.filter((id) => !stored.has(id))).toEqual([]);
}, 60_000);
