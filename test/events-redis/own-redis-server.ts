import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { spawnTracked } from "../support/child-processes.js";

/**
 * A Redis server of the test's own, on a free loopback port, that the test
 * may stop and start again: the outage tests never stop the shared one.
 */
export interface OwnRedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops it as a crash would leave it: SHUTDOWN NOSAVE, nothing kept. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

export function redisServerInstalled(): boolean {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export async function startOwnRedisServer(): Promise<OwnRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawnTracked(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--enable-debug-command", "yes"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child = started;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      started.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (out.includes("Ready to accept connections")) resolve();
      });
      started.once("exit", (code) => reject(new Error(`redis-server on port ${port} exited (${code}) before it was ready:\n${out}`)));
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
      execFileSync("redis-cli", ["-p", String(port), "shutdown", "nosave"], { stdio: "ignore" });
      await exited;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
