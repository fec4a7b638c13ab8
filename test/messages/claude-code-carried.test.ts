import type { ChildProcess } from "node:child_process";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { agentCli } from "../support/agent-clients.js";
import { killGroup, spawnTracked } from "../support/child-processes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";

/**
 * Claude Code as people run it, on a native Anthropic route: `claude -p`
 * through carrierd to the Anthropic emulator, with a recording proxy in
 * front of carrierd. Every request Claude Code sent reaches the upstream
 * byte for byte but the model name the route maps (docs/api.md#carried-requests),
 * and the upstream accepts every one.
 */
const KEY = "sk-ant-emulated";
const UPSTREAM_MODEL = "claude-emulated-20261207";

let anthropic: AnthropicEmulator;
let gateway: TestGateway;
let proxy: Server;
let proxyUrl: string;
let root: string;
/** What Claude Code sent to POST /v1/messages, in order: its model and its body's bytes. */
const sent: Buffer[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "carrierd-claude-carried-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "work"));
  anthropic = await startAnthropicEmulator({ apiKey: KEY });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: "claude-*", provider: anthropic, model: ${UPSTREAM_MODEL} }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: KEY },
  });
  // records each request's bytes, then hands it to carrierd as it came
  const target = new URL(gateway.url);
  proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      if (incoming.method === "POST" && incoming.url?.split("?")[0] === "/v1/messages") sent.push(body);
      const forward = httpRequest(
        { host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.on("error", () => outgoing.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await gateway?.stop();
  await anthropic?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function claude(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = join(root, "work");
  const child: ChildProcess = spawnTracked(await agentCli("claude-code-2.1.337"), args, {
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: join(root, "home"),
      PWD: work,
      ANTHROPIC_BASE_URL: proxyUrl,
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
  killGroup(child.pid!);
  return { code, stdout, stderr };
}

test("claude -p on an Anthropic route: every request reaches the upstream byte for byte but the model, and is accepted", { timeout: 120_000 }, async () => {
  const result = await claude(["-p", "Say hello.", "--model", "claude-sonnet-4-5", "--max-turns", "3"], 90_000);
  const upstream = anthropic.received.filter((request) => request.path === "/v1/messages");
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}\nstatuses: ${upstream.map((request) => request.status).join(",")}`).toBe(0);
  expect(sent.length).toBeGreaterThan(0);
  expect(upstream.length).toBe(sent.length);
  expect(upstream.map((request) => request.status)).toEqual(sent.map(() => 200));
  sent.forEach((body, index) => {
    const text = body.toString("utf8");
    const model = (JSON.parse(text) as { model: string }).model;
    const expected = text.replace(`"model":${JSON.stringify(model)}`, `"model":${JSON.stringify(UPSTREAM_MODEL)}`);
    expect(upstream[index]!.raw.toString("utf8"), `request ${index} (${model})`).toBe(expected);
  });
});
