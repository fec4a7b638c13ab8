import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { agentCli } from "../support/agent-clients.js";
import { killGroup, spawnTracked } from "../support/child-processes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startStrictDeepSeek, strictRoutes, type StrictDeepSeek } from "./strict-deepseek-emulator.js";

const SECRET = "carrierd-7f3a9c";

let upstream: StrictDeepSeek;
let gateway: TestGateway;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "carrierd-claude-code-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "work"));
  writeFileSync(join(root, "work", "secret.txt"), `${SECRET}\n`);
  // the model reads the file the prompt names with Claude Code's Read tool, then answers with what it read
  upstream = await startStrictDeepSeek((tools) =>
    tools.includes("Read") ? { name: "Read", arguments: { file_path: join(root, "work", "secret.txt") } } : undefined,
  );
  gateway = await startTestGateway({ routes: strictRoutes(upstream.baseUrl), env: { DEEPSEEK_API_KEY: "sk-emulated" } });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs `claude -p` against the gateway with a throwaway HOME and working directory; its process group is killed at the end, whatever happens. */
async function claude(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = join(root, "work");
  const child: ChildProcess = spawnTracked(await agentCli("claude-code-2.1.328"), args, {
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: join(root, "home"),
      PWD: work,
      ANTHROPIC_BASE_URL: gateway.url,
      ANTHROPIC_AUTH_TOKEN: gateway.key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
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

test(
  "claude -p completes a tool loop through carrierd against a DeepSeek-like upstream that needs its reasoning back verbatim",
  { timeout: 120_000 },
  async () => {
    const result = await claude(
      ["-p", "Read the file secret.txt and tell me what it says.", "--model", "claude-sonnet-4-5", "--allowedTools", "Read", "--max-turns", "4"],
      90_000,
    );
    const shapes = upstream.requests.map((request) => ({
      tools: (request.tools ?? []).length,
      roles: request.messages.map((message) => message.role + (message.tool_calls ? "+tools" : "")),
    }));
    expect(
      result.code,
      `stdout: ${result.stdout}\nstderr: ${result.stderr}\nrequests: ${JSON.stringify(shapes)}\nstatuses: ${JSON.stringify(upstream.statuses)}`,
    ).toBe(0);
    expect(result.stdout).toContain(SECRET);
    // the turn after the tool call went upstream with that turn's reasoning, verbatim, and nothing was refused
    expect(upstream.statuses.every((status) => status === 200)).toBe(true);
    const followUp = upstream.requests.find((request) => request.messages.some((message) => message.role === "tool"));
    expect(followUp).toBeDefined();
    const toolTurn = followUp!.messages.find((message) => message.role === "assistant" && message.tool_calls?.length);
    expect(toolTurn?.reasoning_content).toMatch(/I will call Read/);
    // Claude Code's cache_control marks are Anthropic's: an OpenAI-style upstream never sees them
    expect(JSON.stringify(upstream.requests)).not.toContain("cache_control");
  },
);
