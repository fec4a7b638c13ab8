import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnTracked } from "./child-processes.js";

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory,
 * a free loopback port), which the test may stop and start again: a restart
 * under load never touches the shared server other suites use.
 */
export interface OwnPostgresServer {
  readonly url: string;
  /** A fast shutdown (SIGINT): sessions are cut, what was committed stays. */
  stop(): Promise<void>;
  /** Starts it again on the same data and port. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  remove(): Promise<void>;
}

/** The newest installed server's bin directory, or undefined when the machine has none. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

export async function startOwnPostgresServer(): Promise<OwnPostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "carrierd-own-pg-"));
  const data = join(dir, "data");
  // the server refuses to run as root: as root, it runs as the postgres user, which owns its directory
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? ["runuser", "-u", "postgres", "--"] : [];
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (command: string, args: string[]) => (user.length > 0 ? { command: user[0]!, args: [...user.slice(1), command, ...args] } : { command, args });
  const initdb = run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  execFileSync(initdb.command, initdb.args, { stdio: "ignore" });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const server = run(join(bin, "postgres"), ["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1"]);
    const started = spawnTracked(server.command, server.args, { stdio: ["ignore", "pipe", "pipe"] });
    child = started;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      started.stderr!.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (out.includes("ready to accept connections")) resolve();
      });
      started.once("exit", (code) => reject(new Error(`postgres on port ${port} exited (${code}) before it was ready:\n${out}`)));
    });
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.pid === undefined) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    // to the whole group (runuser and the server under it): SIGINT is PostgreSQL's fast shutdown
    process.kill(-running.pid, "SIGINT");
    await exited;
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async remove() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
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
