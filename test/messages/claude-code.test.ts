import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { agentCli, type AgentCliName } from "../support/agent-clients.js";
import { killGroup, spawnTracked } from "../support/child-processes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { deepseekRoutes } from "../support/family-routes.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

/**
 * The real Claude Code, as people run it, against a DeepSeek-like upstream
 * that needs its reasoning back verbatim: a non-Claude model name (what the
 * usual set-up on DeepSeek, Kimi or GLM names), no model at all (Claude
 * Code's own default, a Claude name aliased in routes.yaml), and a Claude
 * alias. These names make Claude Code send its environment notes as a
 * `role: "system"` message inside `messages`; every request must be
 * accepted the first time, a tool loop and then `--continue`.
 */

/** The Claude Code binaries under test, by version; another version is one more line. */
const VERSIONS: Readonly<Record<string, AgentCliName>> = {
  "2.1.328": "claude-code-2.1.328",
  "2.1.337": "claude-code-2.1.337",
};

/** How a run names its model: `--model`, ANTHROPIC_MODEL, or nothing (Claude Code's default). */
interface ModelChoice {
  readonly label: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

const CHOICES: readonly ModelChoice[] = [
  { label: "--model deepseek-v4-pro", args: ["--model", "deepseek-v4-pro"], env: {} },
  { label: "ANTHROPIC_MODEL=deepseek-v4-pro", args: [], env: { ANTHROPIC_MODEL: "deepseek-v4-pro" } },
  { label: "no model named (Claude Code's default, a claude-* alias)", args: [], env: {} },
  { label: "--model opus (a claude-* alias)", args: ["--model", "opus"], env: {} },
];

const SECRET = "carrierd-7f3a9c";

let upstream: DeepSeekUpstream;
let gateway: TestGateway;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "carrierd-claude-code-"));
  // the model reads the file the prompt names with Claude Code's Read tool, then answers with what it read
  upstream = await startDeepSeek({
    answers: {
      kind: "planned",
      plan: (tools, prompt) => {
        const file = /file (\S+) /.exec(prompt)?.[1];
        return tools.includes("Read") && file ? { name: "Read", arguments: { file_path: file } } : undefined;
      },
    },
  });
  gateway = await startTestGateway({ routes: deepseekRoutes(upstream.baseUrl), env: { DEEPSEEK_API_KEY: "sk-emulated" } });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A throwaway HOME and working folder, with the file the prompt names. */
function folders(name: string): { home: string; work: string; file: string } {
  const home = join(root, name, "home");
  const work = join(root, name, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const file = join(work, "secret.txt");
  writeFileSync(file, `${SECRET}\n`);
  return { home, work, file };
}

/** Runs `claude -p` against the gateway in `home` and `work`; its process group is killed at the end, whatever happens. */
async function claude(
  binary: AgentCliName,
  where: { home: string; work: string },
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child: ChildProcess = spawnTracked(await agentCli(binary), args, {
    cwd: where.work,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: where.home,
      PWD: where.work,
      ANTHROPIC_BASE_URL: gateway.url,
      ANTHROPIC_AUTH_TOKEN: gateway.key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      ...env,
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const timer = setTimeout(() => killGroup(child.pid!), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  killGroup(child.pid!); // whatever it left running
  return { code, stdout, stderr };
}

describe.each(Object.entries(VERSIONS))("Claude Code %s", (version, binary) => {
  test.each(CHOICES.map((choice) => [choice.label, choice] as const))(
    "%s: a tool loop, then --continue, every upstream request accepted the first time",
    { timeout: 180_000 },
    async (_label, choice) => {
      const where = folders(`${version}-${CHOICES.indexOf(choice)}`);
      const first = upstream.requests.length;
      const tools = ["--allowedTools", "Read", "--max-turns", "4"];
      const runs = [
        await claude(binary, where, ["-p", `Read the file ${where.file} and tell me what it says.`, ...choice.args, ...tools], choice.env, 80_000),
        await claude(
          binary,
          where,
          ["-p", "--continue", `Read the file ${where.file} once more and tell me again.`, ...choice.args, ...tools],
          choice.env,
          80_000,
        ),
      ];
      const requests = upstream.requests.slice(first);
      const statuses = upstream.statuses.slice(first);
      const why = (run: { stdout: string; stderr: string }) =>
        `stdout: ${run.stdout}\nstderr: ${run.stderr}\nroles: ${JSON.stringify(requests.map((request) => request.messages.map((message) => message.role)))}\nstatuses: ${JSON.stringify(statuses)}`;
      for (const run of runs) {
        expect(run.code, why(run)).toBe(0);
        expect(run.stdout, why(run)).toContain(SECRET);
      }
      // every request went upstream once and was accepted: nothing refused by carrierd, nothing by the upstream
      expect(statuses.length).toBeGreaterThanOrEqual(4);
      expect(statuses.every((status) => status === 200)).toBe(true);
      // the turn after each tool call went upstream with that turn's reasoning, verbatim (the emulator checks it byte for byte)
      const last = requests.findLast((request) => request.messages.some((message) => message.role === "tool"))!;
      expect(
        last.messages.filter(
          (message) => message.role === "assistant" && message.tool_calls?.length && /I will call Read/.test(String(message.reasoning_content)),
        ),
      ).toHaveLength(2);
      // Claude Code's environment notes, a system message after the first user message, went upstream in their place
      const roles = requests[0]!.messages.map((message) => message.role);
      expect(roles.indexOf("system", 1), JSON.stringify(roles)).toBeGreaterThan(roles.indexOf("user"));
      // Claude Code's own session id (x-claude-code-session-id) names the session its turns are listed under
      const listed = await fetch(`${gateway.url}/v1/sessions`, { headers: { authorization: `Bearer ${gateway.key}` } });
      const sessions = ((await listed.json()) as { data: { id: string }[] }).data.map((session) => session.id);
      expect(
        sessions.filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)).length,
        JSON.stringify(sessions),
      ).toBeGreaterThan(0);
      // Claude Code's cache_control marks are Anthropic's: an OpenAI-style upstream never sees them
      expect(JSON.stringify(requests)).not.toContain("cache_control");
    },
  );
});
