import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The real CLI gateway at debug level in a home an operator left
 * world-readable, with a provider that echoes the credential it receives
 * in its error message (some do). Modes are read while the gateway runs
 * (SQLite removes -wal and -shm at a clean close).
 */
const PROVIDER_KEY = "prov-7f3a9c1e5b2d4f60a8"; // no well-known shape: only masking by value catches it
let home: string;
let upstream: Server;
const modes: Record<string, number> = {};
let gatewayKey: string;
let echoed: { status: number; body: string };
let log: string;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    request.resume();
    response.writeHead(401, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${String(request.headers.authorization).replace(/^Bearer /, "")}`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      }),
    );
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  home = mkdtempSync(join(tmpdir(), "carrierd-private-"));
  chmodSync(home, 0o755);
  mkdirSync(join(home, "logs"), { mode: 0o755 });
  chmodSync(join(home, "logs"), 0o755);
  writeFileSync(join(home, "logs", "carrierd.log"), "", { mode: 0o644 });
  chmodSync(join(home, "logs", "carrierd.log"), 0o644);
  const routes = join(home, "routes.yaml");
  const port = (upstream.address() as AddressInfo).port;
  writeFileSync(
    routes,
    `version: 1\nproviders:\n  demo: { plugin: demo }\n  echo: { plugin: openai-compatible, base_url: "http://127.0.0.1:${port}/v1", api_key_env: ECHO_KEY }\nmodels:\n  - { name: demo, provider: demo }\n  - { name: echo, provider: echo }\n`,
  );
  const gateway = await startGatewayProcess(
    ["--port", "0", "--routes", routes, "--log-level", "debug"],
    cleanEnv({ CARRIERD_HOME: home, ECHO_KEY: PROVIDER_KEY }),
  );
  try {
    gatewayKey = readFileSync(join(home, "api_key"), "utf8").trim();
    const post = (model: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${gatewayKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      });
    expect((await post("demo")).status).toBe(200);
    const failed = await post("echo");
    echoed = { status: failed.status, body: await failed.text() };
    await fetch(`${gateway.url}/v1/models?api_key=${gatewayKey}`, { headers: { authorization: `Bearer ${gatewayKey}` } });
    await fetch(`${gateway.url}/v1/models?foo=1&key=${gatewayKey}`);
    const names = ["", "logs", "state.db", "state.db-wal", "state.db-shm", "turns.journal", "api_key", join("logs", "carrierd.log")];
    // the turn's commit: state.db-wal exists from then on
    await waitFor(() => names.every((name) => existsSync(join(home, name))), { what: "every file of the home" });
    for (const name of names) {
      modes[name || "."] = statSync(join(home, name)).mode & 0o777;
    }
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  log = readFileSync(join(home, "logs", "carrierd.log"), "utf8");
});
afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

test("a world-readable home is tightened at start: folders 0700, every state file 0600", () => {
  expect(modes).toEqual({
    ".": 0o700,
    logs: 0o700,
    "state.db": 0o600,
    "state.db-wal": 0o600,
    "state.db-shm": 0o600,
    "turns.journal": 0o600,
    api_key: 0o600,
    [join("logs", "carrierd.log")]: 0o600,
  });
  expect(log).toMatch(/made private \(0700\/0600\)/);
});

test("an upstream error that echoes the provider key reaches the client with the key masked", () => {
  expect(echoed.status).toBe(401);
  expect(echoed.body).not.toContain(PROVIDER_KEY);
  expect(JSON.parse(echoed.body)).toMatchObject({ error: { message: "Incorrect API key provided: [redacted]" } });
});

test("no key reaches the log at debug level, query strings included", () => {
  // the request with ?api_key= was logged (the access log keeps the path, never its query string), and no key anywhere
  expect(log).toMatch(/"path":"\/v1\/models","model":null,"status":200/);
  expect(log).not.toContain(gatewayKey);
  expect(log).not.toContain(PROVIDER_KEY);
});
