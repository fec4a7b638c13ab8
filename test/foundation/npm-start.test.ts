import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, expect, onTestFinished, test } from "vitest";
import { isRunning, killGroup, spawnTracked } from "../support/child-processes.js";
import { waitFor } from "../support/wait-for.js";
import { cleanEnv, REPO } from "./cli-process.js";

/**
 * `npm start` as a service manager runs it: the signal goes to npm (or to
 * npm and the gateway both, as systemd's default does, or as a terminal's
 * Ctrl-C does), and the gateway finishes its open streams, exits, and
 * leaves its port free and no process behind. If npm itself is killed
 * outright, the gateway notices and stops too.
 */

const home = mkdtempSync(join(tmpdir(), "carrierd-npm-start-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const KEY = "npm-start-key-0123456789";
const NPM = existsSync(join(dirname(process.execPath), "npm")) ? join(dirname(process.execPath), "npm") : "npm";

interface NpmStart {
  readonly npm: ChildProcess;
  readonly url: string;
  readonly port: number;
  /** The gateway's own process (npm's child). */
  readonly gatewayPid: number;
  readonly exited: Promise<number | null>;
  output(): string;
}

async function npmStart(name: string): Promise<NpmStart> {
  const npm = spawnTracked(NPM, ["start", "--", "--port", "0"], {
    cwd: REPO,
    env: cleanEnv({ CARRIERD_HOME: join(home, name), CARRIERD_API_KEY: KEY }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  onTestFinished(() => void killGroup(npm.pid!));
  let out = "";
  npm.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  npm.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  await waitFor(() => /"msg":"carrierd listening on /.test(out) || npm.exitCode !== null, { timeoutMs: 30_000, intervalMs: 20 });
  const line = out.split("\n").find((text) => text.includes('"msg":"carrierd listening on '));
  if (!line) throw new Error(`npm start exited before listening:\n${out}`);
  const record = JSON.parse(line) as { url: string; pid: number };
  return { npm, url: record.url, port: Number(new URL(record.url).port), gatewayPid: record.pid, exited, output: () => out };
}

/** Opens a streaming demo request and reads its first chunk (the shipped demo is paced: the stream is still open after it). */
async function openStream(url: string): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "Tell me about graceful shutdowns" }] }),
  });
  const reader = response.body!.getReader();
  await reader.read();
  return reader;
}

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
  } catch {
    // the connection was cut
  }
  return text;
}

/** Whether something may listen on the port again. */
function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

test("SIGTERM to npm start: the open stream finishes, npm exits 0, and the port is free with no process left", async () => {
  const started = await npmStart("sigterm");
  const reader = await openStream(started.url);
  started.npm.kill("SIGTERM");
  expect(await readRest(reader)).toMatch(/data: \[DONE\]\n\n$/);
  expect(await started.exited, started.output()).toBe(0);
  expect(isRunning(started.gatewayPid)).toBe(false);
  expect(await portIsFree(started.port)).toBe(true);
});

test("SIGINT to npm and the gateway at once (a terminal's Ctrl-C, a service manager signalling the whole unit) is one stop: the open stream finishes", async () => {
  const started = await npmStart("sigint");
  const reader = await openStream(started.url);
  process.kill(started.gatewayPid, "SIGINT");
  started.npm.kill("SIGINT");
  expect(await readRest(reader)).toMatch(/data: \[DONE\]\n\n$/);
  expect(await started.exited, started.output()).toBe(0);
  expect(isRunning(started.gatewayPid)).toBe(false);
  expect(await portIsFree(started.port)).toBe(true);
});

test("npm killed outright (SIGKILL passes nothing on): the gateway notices its parent is gone, stops, and frees the port", async () => {
  const started = await npmStart("orphan");
  started.npm.kill("SIGKILL");
  await started.exited;
  // the gateway looks for its parent once a second, then closes
  await waitFor(() => !isRunning(started.gatewayPid), { timeoutMs: 15_000, intervalMs: 50 });
  expect(await portIsFree(started.port)).toBe(true);
});
