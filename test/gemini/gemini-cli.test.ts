import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";
import { SKIP, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";
import { agentCli, pinnedVersion } from "../support/agent-clients.js";
import { killGroup, RUN_MARKER_VARIABLE, spawnTracked } from "../support/child-processes.js";
import { startDeepSeek, type DeepSeekUpstream, type FixtureFile } from "../support/openai-upstream.js";

/**
 * The real Gemini CLI (`@google/gemini-cli` 0.61.0, offline) pointed at a
 * carrierd process with GOOGLE_GEMINI_BASE_URL and an API key of carrierd's,
 * as the README's "Agent CLIs" configures it. The models it asks for
 * (`gemini-3.x` names of its own, its router's and its main model's) are
 * aliased in routes.yaml to a DeepSeek-like upstream that refuses a
 * tool-call turn resent without its verbatim reasoning_content, and to a
 * Gemini upstream that refuses a function call resent without its signature.
 */
const VERSION = pinnedVersion("gemini-cli-0.61.0");
const TIME_LIMIT_MS = 90_000;
/** `~/.gemini/settings.json` as README shows it: API-key auth, and a model named rather than "auto" (whose router asks the model for JSON first). */
const README_SETTINGS = { security: { auth: { selectedType: "gemini-api-key" } }, model: { name: "gemini-3.1-pro-preview" } };
const KEY = `cd-gemini-${randomBytes(12).toString("hex")}`;

interface Stack {
  readonly root: string;
  readonly work: string;
  readonly home: string;
  readonly files: FixtureFile[];
  readonly gateway: RunningGateway;
  /** The access log's lines for the Gemini door's paths. */
  requests(): { path: string; status: number; upstream_attempts: number; model: string }[];
}

let bin: string;
let deepseek: DeepSeekUpstream;
let gemini: Emulator;
let stack: Stack;

beforeAll(async () => {
  bin = await agentCli("gemini-cli-0.61.0");
  const root = mkdtempSync(join(tmpdir(), "carrierd-gemini-cli-"));
  const home = join(root, "home");
  const work = join(root, "work");
  for (const dir of [home, work, join(root, "tmp"), join(home, ".gemini")]) mkdirSync(dir, { recursive: true });
  const files = ["plan", "status"].map((name) => {
    const marker = `${name}-${randomBytes(4).toString("hex")}`;
    const path = join(work, `${name}-notes.txt`);
    writeFileSync(path, `Notes (${name})\nThe word of the day is ${marker}.\n`);
    return { path, marker };
  });
  // README's settings, and what keeps the CLI offline
  const offline = {
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ ...README_SETTINGS, ...offline }));
  writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [work]: "TRUST_FOLDER" }));
  deepseek = await startDeepSeek({ answers: { kind: "tool-loop", files }, echo: "own-calls" });
  gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
  const routes = join(root, "routes.yaml");
  // Gemini CLI names its own models: every gemini-* name goes where the test says (docs/routes.md, "Models")
  writeFileSync(
    routes,
    `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${deepseek.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: "emulated-gemini-*", provider: gemini, model: gemini-3-pro-preview }
  - { name: "gemini-*", provider: deepseek, model: deepseek-v4-pro }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
  );
  const gateway = await startGatewayProcess(
    ["--port", "0", "--routes", routes],
    cleanEnv({ CARRIERD_HOME: join(root, "carrierd"), CARRIERD_API_KEY: KEY, DEEPSEEK_API_KEY: "sk-emulated", GEMINI_API_KEY: "gemini-test-key" }),
  );
  stack = {
    root,
    work,
    home,
    files,
    gateway,
    requests: () =>
      gateway
        .stdout()
        .split("\n")
        .slice(0, -1)
        .flatMap((line) => {
          if (!line.startsWith("{")) return [];
          const record = JSON.parse(line) as { msg?: string; path?: string; status: number; upstream_attempts: number; model: string };
          return record.msg === "request" && record.path?.startsWith("/v1beta/models/") ? [record as { path: string } & typeof record] : [];
        }),
  };
}, 660_000);
afterAll(async () => {
  await stack?.gateway.stop();
  await deepseek?.close();
  await gemini?.close();
  if (stack) rmSync(stack.root, { recursive: true, force: true });
});

/** `gemini -p` in the throwaway working folder, offline (every proxy a closed port), its process group killed at the end. */
async function runGemini(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const closed = "http://127.0.0.1:9";
  const child = spawnTracked(bin, args, {
    cwd: stack.work,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      LANG: "C.UTF-8",
      HOME: stack.home,
      PWD: stack.work,
      TMPDIR: join(stack.root, "tmp"),
      TERM: "dumb",
      NO_COLOR: "1",
      CI: "1",
      HTTP_PROXY: closed,
      HTTPS_PROXY: closed,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      GOOGLE_GEMINI_BASE_URL: stack.gateway.url,
      GEMINI_API_KEY: KEY,
      [RUN_MARKER_VARIABLE]: process.env[RUN_MARKER_VARIABLE],
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const timer = setTimeout(() => killGroup(child.pid!), TIME_LIMIT_MS);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  killGroup(child.pid!);
  return { code, stdout, stderr };
}

test("README's Agent CLIs shows the settings this test writes, and the pinned version", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("### Gemini CLI"), readme.indexOf("\n## ", readme.indexOf("### Gemini CLI")));
  expect(section).toContain(`\`@google/gemini-cli\` ${VERSION}`);
  expect(section).toContain(`\`~/.gemini/settings.json\``);
  expect(section).toContain(`\`\`\`json\n${JSON.stringify(README_SETTINGS, null, 2)}\n\`\`\``);
});

const PROMPT = "Read both notes files in this folder and tell me what they say.";
const FOLLOW_UP = "Read them once more, in case they changed, and tell me again.";

describe("Gemini CLI through carrierd's Gemini door", () => {
  test(
    "a tool loop on a DeepSeek route, then the session resumed by a new process: every upstream request accepted first time, the verbatim reasoning_content on each tool-call turn",
    { timeout: 2 * TIME_LIMIT_MS + 15_000 },
    async ({ annotate }) => {
      const first = await runGemini(["-p", PROMPT, "--approval-mode", "yolo"]);
      expect(first.code, first.stderr.slice(-3000)).toBe(0);
      // the same session continued by a new process, which rebuilds the history from the CLI's own storage
      const run = await runGemini(["-p", FOLLOW_UP, "--approval-mode", "yolo", "--resume", "latest"]);
      const why = `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\nupstream: ${JSON.stringify(
        deepseek.exchanges.map((exchange) => [exchange.status, exchange.answer, exchange.reason]),
      )}\ncarrierd: ${stack.gateway.stdout().slice(-3000)}`;
      expect(run.code, why).toBe(0);
      expect(run.stdout, why).toContain(`The notes say ${stack.files.map((file) => file.marker).join(" and ")}.`);
      const loop = deepseek.exchanges.filter((exchange) => exchange.answer !== "plain");
      expect(first.stdout, why).toContain(`The notes say ${stack.files.map((file) => file.marker).join(" and ")}.`);
      expect(
        loop.map((exchange) => exchange.answer),
        why,
      ).toEqual([1, 2].flatMap(() => [...stack.files.map(() => "tool_call"), "final"]));
      expect(loop.at(-1)!.resentToolTurns, why).toBe(2 * stack.files.length);
      expect(
        deepseek.exchanges.every((exchange) => exchange.status === 200),
        why,
      ).toBe(true);
      const requests = stack.requests();
      expect(
        requests.map((line) => [line.status, line.upstream_attempts]),
        why,
      ).toEqual(requests.map(() => [200, 1]));
      expect(deepseek.exchanges.length, why).toBe(requests.length);
      await annotate(`${requests.length} client requests, ${deepseek.exchanges.length} upstream, none refused`);
    },
  );

  test(
    "a tool loop on a Gemini route: the function call comes back with the signature Gemini issued, never the skip placeholder",
    { timeout: TIME_LIMIT_MS + 15_000 },
    async ({ annotate }) => {
      const before = gemini.received.length;
      const run = await runGemini(["-p", "What is the weather in Rome?", "--approval-mode", "yolo", "-m", "emulated-gemini-3-pro"]);
      const received = gemini.received.slice(before);
      const why = `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\nupstream: ${JSON.stringify(
        received.map((exchange) => [exchange.status, exchange.raw.toString().slice(0, 300)]),
      )}\ncarrierd: ${stack.gateway.stdout().slice(-3000)}`;
      expect(run.code, why).toBe(0);
      // one upstream request per request of the CLI's
      expect(received.length, why).toBe(stack.requests().filter((line) => line.model.startsWith("emulated-")).length);
      const withCalls = received.filter((exchange) => exchange.raw.toString().includes('"functionCall"'));
      expect(withCalls.length, why).toBeGreaterThan(0);
      for (const exchange of received) {
        expect(exchange.status, why).toBe(200);
        expect(exchange.raw.toString(), why).not.toContain(SKIP);
      }
      await annotate(`${received.length} client requests, ${received.length} upstream, ${withCalls.length} resending a signed function call, none refused`);
    },
  );
});
