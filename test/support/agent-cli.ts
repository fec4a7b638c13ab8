import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "vitest";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";
import { agentCli, type AgentCliName } from "./agent-clients.js";
import { AGENT_MODEL } from "./agent-configs.js";
import { killGroup, RUN_MARKER_VARIABLE, spawnTracked } from "./child-processes.js";
import { startDeepSeek, type DeepSeekUpstream, type FixtureFile } from "./openai-upstream.js";
import { waitFor } from "./wait-for.js";

/**
 * Runs a real agent CLI from npm (pinned under test/agents/, installed by
 * agentCli on first use) against a real carrierd process (`bin/carrierd gateway`, compiled) whose
 * one provider is the DeepSeek tool-loop emulator. Each run gets a throwaway
 * HOME and working folder, an environment built from nothing (no setting of
 * the developer's leaks in), no way out to the internet (every proxy
 * variable points at a closed loopback port), and a time limit that kills
 * its whole process group.
 */

/** The prompt every CLI is given: it names no file and no marker, so the answer can only come from the tool loop. */
export const AGENT_PROMPT = "Read both notes files in this folder and tell me what they say.";
/** The second prompt, in the same session continued by a new process. */
export const AGENT_FOLLOW_UP = "Read them once more, in case they changed, and tell me again.";

/**
 * How long one CLI run may take for its whole loop before its process group
 * is killed. Alone on this machine a run takes 1–5 s; with the whole suite
 * running beside it on two cores opencode's start alone has taken 14 s.
 */
export const CLI_TIME_LIMIT_MS = 60_000;
/** A test's own limit: two runs (a prompt, then the session continued), plus starting and stopping the gateway and the emulator. */
export const CLI_TEST_TIMEOUT = { timeout: 2 * CLI_TIME_LIMIT_MS + 15_000 };

export { agentCli, type AgentCliName } from "./agent-clients.js";

const GATEWAY_KEY = `cd-agents-${randomBytes(12).toString("hex")}`;

export interface AgentStack {
  /** The throwaway HOME of the CLI. */
  readonly home: string;
  /** The throwaway working folder, holding the notes files. */
  readonly work: string;
  readonly files: readonly FixtureFile[];
  readonly upstream: DeepSeekUpstream;
  readonly gateway: RunningGateway;
  /** carrierd's OpenAI base URL (`…/v1`). */
  readonly baseUrl: string;
  readonly key: string;
  /** A loopback port nothing listens on: where the CLI's proxies and package registry point. */
  readonly closedPort: number;
  /** Writes a file under HOME (creating its folders). */
  writeHomeFile(relative: string, text: string): string;
  /** The environment of a CLI run: nothing inherited but PATH, the locale and the suite's process marker. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** The requests clients made to carrierd's model endpoints, from its access log. */
  clientRequests(): AccessLine[];
  stop(): Promise<void>;
}

export interface AccessLine {
  readonly method: string;
  readonly path: string;
  readonly model: string | null;
  readonly status: number;
  readonly upstream_attempts: number;
}

/** DeepSeek's carrier route as the shipped routes.yaml has it (docs/routes.md), or one that sends no reasoning field (`fields: []`). */
function routesFor(upstreamUrl: string, replay: boolean): string {
  return `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${upstreamUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: ${AGENT_MODEL}, provider: deepseek, model: ${AGENT_MODEL} }
carriers:
  - match: { provider: deepseek }
    fields: [${replay ? "reasoning_content" : ""}]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`;
}

/** A loopback port that was free a moment ago and has no listener now. */
async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const MODEL_PATHS = new Set(["/v1/chat/completions", "/v1/responses", "/v1/messages"]);

/**
 * Starts the emulator and a carrierd process in front of it, and lays out a
 * fresh HOME and working folder. `replay: false` gives DeepSeek a carrier
 * route with no fields: carrierd then sends no reasoning at all, the control
 * that shows the emulator catches a client whose reasoning is lost.
 */
export async function startAgentStack({ replay = true }: { replay?: boolean } = {}): Promise<AgentStack> {
  const root = mkdtempSync(join(tmpdir(), "carrierd-agent-"));
  const home = join(root, "home");
  const work = join(root, "work");
  for (const dir of [home, work, join(root, "tmp")]) mkdirSync(dir, { recursive: true });
  const files = ["plan", "status"].map((name) => {
    const marker = `${name}-${randomBytes(4).toString("hex")}`;
    const path = join(work, `${name}-notes.txt`);
    writeFileSync(path, `Notes (${name})\nThe word of the day is ${marker}.\n`);
    return { path, marker };
  });
  const routes = join(root, "routes.yaml");
  const closedPort = await closedLoopbackPort();
  let upstream: DeepSeekUpstream | undefined;
  let gateway: RunningGateway | undefined;
  const stop = async () => {
    await gateway?.stop();
    await upstream?.close();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    upstream = await startDeepSeek({ answers: { kind: "tool-loop", files }, echo: "own-calls" });
    writeFileSync(routes, routesFor(upstream.baseUrl, replay));
    gateway = await startGatewayProcess(
      ["--port", "0", "--routes", routes],
      cleanEnv({ CARRIERD_HOME: join(root, "carrierd"), CARRIERD_API_KEY: GATEWAY_KEY, DEEPSEEK_API_KEY: "sk-emulated" }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const running = gateway;
  const proxy = `http://127.0.0.1:${closedPort}`;
  return {
    home,
    work,
    files,
    upstream,
    gateway: running,
    baseUrl: `${running.url}/v1`,
    key: GATEWAY_KEY,
    closedPort,
    writeHomeFile(relative, text) {
      const path = join(home, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    env(extra = {}) {
      return {
        PATH: process.env.PATH,
        LANG: "C.UTF-8",
        HOME: home,
        PWD: work,
        USER: "agent",
        TMPDIR: join(root, "tmp"),
        SHELL: "/bin/bash",
        TERM: "dumb",
        NO_COLOR: "1",
        CI: "1",
        HTTP_PROXY: proxy,
        HTTPS_PROXY: proxy,
        http_proxy: proxy,
        https_proxy: proxy,
        ALL_PROXY: proxy,
        NO_PROXY: "127.0.0.1,localhost",
        no_proxy: "127.0.0.1,localhost",
        [RUN_MARKER_VARIABLE]: process.env[RUN_MARKER_VARIABLE],
        ...extra,
      };
    },
    clientRequests() {
      // whole lines only: the last one may still be arriving
      const lines = running.stdout().split("\n").slice(0, -1);
      return lines.flatMap((line) => {
        if (!line.startsWith("{")) return [];
        const record = JSON.parse(line) as Partial<AccessLine> & { msg?: string };
        return record.msg === "request" && MODEL_PATHS.has(record.path ?? "") ? [record as AccessLine] : [];
      });
    },
    stop,
  };
}

export interface AgentRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

/** Runs the pinned client `cli` with `args` in the stack's working folder; past CLI_TIME_LIMIT_MS its process group is killed. */
export async function runAgent(stack: AgentStack, cli: AgentCliName, args: readonly string[], env: NodeJS.ProcessEnv): Promise<AgentRun> {
  const bin = await agentCli(cli);
  const started = performance.now();
  const child = spawnTracked(bin, args, { cwd: stack.work, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid!);
  }, CLI_TIME_LIMIT_MS);
  // whatever the CLI left running in its group (a server, a language tool) goes with it, and with it the pipes it held open
  child.once("exit", () => killGroup(child.pid!));
  return new Promise((resolve) => {
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: Math.round(performance.now() - started) });
    });
  });
}

/** What a run cost upstream: requests carrierd made per request a client made, and how many the emulator refused. */
export function upstreamPerTurn(stack: AgentStack): { clientRequests: number; upstreamRequests: number; refused: number; perTurn: number } {
  const clientRequests = stack.clientRequests().length;
  const upstreamRequests = stack.upstream.exchanges.length;
  const refused = stack.upstream.exchanges.filter((exchange) => exchange.status !== 200).length;
  return { clientRequests, upstreamRequests, refused, perTurn: clientRequests ? upstreamRequests / clientRequests : Number.NaN };
}

/**
 * A CLI may exit as soon as it has read the end of the last answer, a moment
 * before carrierd writes that request's access-log line: wait (briefly) until
 * the log names as many requests as reached the upstream.
 */
async function accessLogCaughtUp(stack: AgentStack): Promise<void> {
  // not caught up within the time: the assertions that follow say what is missing, with the diagnosis
  await waitFor(() => stack.clientRequests().length >= stack.upstream.exchanges.length, { timeoutMs: 2000, intervalMs: 20 }).catch(() => undefined);
}

/** What went wrong, for the assertion messages: the CLI's output, the emulator's refusals, the gateway's log. */
function diagnosis(stack: AgentStack, run: AgentRun): string {
  const reasons = stack.upstream.exchanges.flatMap((exchange, index) => (exchange.reason ? [`upstream request ${index + 1} refused: ${exchange.reason}`] : []));
  return [
    `exit ${run.code ?? run.signal}${run.timedOut ? " (timed out)" : ""}`,
    ...reasons,
    `stdout: ${run.stdout.slice(-2000)}`,
    `stderr: ${run.stderr.slice(-2000)}`,
    `carrierd: ${stack.gateway.stdout().slice(-2000)}`,
  ].join("\n");
}

/**
 * Each run (a first prompt, then the same session continued by a later
 * process that rebuilds the history from the client's own storage)
 * completed the emulator's tool loop through carrierd: one tool call per
 * notes file, then the final answer, which the CLI printed. The last request
 * resent every tool-call turn of the session with its verbatim reasoning,
 * and every client request cost exactly one upstream request, accepted on
 * the first try. Requests without tools (a title) may come in between.
 * Returns the figures, for the test to annotate.
 */
export async function expectToolLoopCompleted(stack: AgentStack, runs: readonly AgentRun[]): Promise<string> {
  await accessLogCaughtUp(stack);
  for (const run of runs) {
    const why = diagnosis(stack, run);
    expect(run.timedOut, why).toBe(false);
    expect(run.code, why).toBe(0);
    expect(run.stdout, why).toContain(`The notes say ${stack.files.map((file) => file.marker).join(" and ")}.`);
  }
  const why = diagnosis(stack, runs.at(-1)!);
  const loop = stack.upstream.exchanges.filter((exchange) => exchange.answer !== "plain");
  expect(
    loop.map((exchange) => exchange.answer),
    why,
  ).toEqual(runs.flatMap(() => [...stack.files.map(() => "tool_call"), "final"]));
  expect(loop.at(-1)!.resentToolTurns, why).toBe(runs.length * stack.files.length);
  const requests = stack.clientRequests();
  expect(
    requests.map((line) => [line.status, line.upstream_attempts]),
    why,
  ).toEqual(requests.map(() => [200, 1]));
  const cost = upstreamPerTurn(stack);
  expect(cost, why).toMatchObject({ refused: 0, perTurn: 1 });
  return `${cost.clientRequests} client requests, ${cost.upstreamRequests} upstream (${cost.perTurn} per turn), ${cost.refused} refused; runs took ${runs.map((run) => `${run.ms} ms`).join(", ")}`;
}
