import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { track } from "../support/child-processes.js";

/** The repo root; `bin/carrierd` runs dist/, which `npm test` builds first (pretest). */
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The environment a CLI test runs in: nothing of the developer's carrierd
 * settings leaks in, nor the marks of the `npm test` around the suite (a
 * gateway started by an npm script behaves as npm's child).
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith("CARRIERD_") && !key.endsWith("_API_KEY") && !key.startsWith("npm_lifecycle_")) env[key] = value;
  return { ...env, NO_COLOR: "1", ...extra };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `carrierd ARGS` to completion (killed after `timeoutMs`, 15 s by default). */
export function carrierd(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const spawnOptions = { cwd: options.cwd ?? REPO, env: options.env ?? cleanEnv(), timeout: options.timeoutMs ?? 15_000, detached: true };
    track(
      execFile(process.execPath, ["bin/carrierd", ...args], spawnOptions, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      }),
    );
  });
}

export interface RunningGateway {
  readonly process: ChildProcessWithoutNullStreams;
  readonly url: string;
  /** Everything the process printed to stdout so far. */
  stdout(): string;
  /** Resolves once stdout (its log lines included, JSON when not a TTY) matches `pattern`. */
  waitFor(pattern: RegExp): Promise<void>;
  /** SIGTERM, and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `carrierd gateway ARGS` and resolves once it prints its listening
 * line. `launcher` runs node (e.g. `taskset -c 0`); `nodeFlags` go to node.
 */
export function startGatewayProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  { launcher = [], nodeFlags = [] }: { launcher?: string[]; nodeFlags?: string[] } = {},
): Promise<RunningGateway> {
  const command = [...launcher, process.execPath, ...nodeFlags, "bin/carrierd", "gateway", ...args];
  const child = track(spawn(command[0]!, command.slice(1), { cwd: REPO, env, detached: true }));
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      // not a TTY: the listening line is a JSON record whose msg is the sentence
      const listening = /"msg":"carrierd listening on (http:\/\/[^"\s]+)"/.exec(out);
      if (listening) {
        resolve({
          process: child,
          url: listening[1]!,
          stdout: () => out,
          waitFor: (pattern) =>
            new Promise<void>((matched) => {
              if (pattern.test(out)) return matched();
              const check = () => {
                if (!pattern.test(out)) return;
                child.stdout.off("data", check);
                matched();
              };
              child.stdout.on("data", check);
            }),
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`gateway exited with ${code} before listening:\n${out}\n${err}`)));
  });
}
