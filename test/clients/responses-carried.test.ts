import type { ChildProcess } from "node:child_process";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { agentCli, pinnedVersion, type AgentCliName } from "../support/agent-clients.js";
import { KEY_VARIABLE } from "../support/agent-configs.js";
import { killGroup, spawnTracked } from "../support/child-processes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../support/openai-responses-upstream.js";

/**
 * The real Codex and the real pi (its `openai-responses` api) on an
 * `openai-responses` route, carried (docs/api.md#carried-requests): through a
 * recording proxy and carrierd to the Responses API emulator, which calls
 * the first tool offered twice, then answers. Every request the client sent
 * reaches the upstream byte for byte but the model the route maps, and the
 * upstream accepts every one.
 */
const KEY = "sk-openai-emulated";
/** What the clients ask for, and what the route sends upstream. */
const CLIENT_MODEL = "gpt-5-codex";
const UPSTREAM_MODEL = "gpt-5.1-codex";

let upstream: ResponsesUpstream;
let gateway: TestGateway;
let proxy: Server;
let proxyUrl: string;
let root: string;
/** What the client sent to POST /v1/responses, in order. */
const sent: Buffer[] = [];

beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY, steps: 2 });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: "${upstream.url}/v1", api_key_env: OPENAI_API_KEY }
models:
  - { name: ${CLIENT_MODEL}, provider: openai, model: ${UPSTREAM_MODEL} }
carriers:
  - match: {}
    fields: []
`,
    env: { OPENAI_API_KEY: KEY },
  });
  // records each request's bytes, then hands it to carrierd as it came
  const target = new URL(gateway.url);
  proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      if (incoming.method === "POST" && incoming.url?.split("?")[0] === "/v1/responses") sent.push(body);
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
  await upstream?.close();
});

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "carrierd-responses-carried-"));
  for (const dir of ["home", "work", "tmp"]) mkdirSync(join(root, dir));
  sent.length = 0;
  upstream.received.length = 0;
  return () => rmSync(root, { recursive: true, force: true });
});

function writeHome(relative: string, text: string): void {
  const path = join(root, "home", relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

async function run(cli: AgentCliName, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = join(root, "work");
  const child: ChildProcess = spawnTracked(await agentCli(cli), args, {
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      LANG: "C.UTF-8",
      HOME: join(root, "home"),
      PWD: work,
      TMPDIR: join(root, "tmp"),
      TERM: "dumb",
      NO_COLOR: "1",
      CI: "1",
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      PI_OFFLINE: "1",
      [KEY_VARIABLE]: gateway.key,
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

/** Every request reached the upstream as the client sent it, but the model; each was accepted; the tool loop ran to its answer. */
function expectCarried(result: { code: number | null; stdout: string; stderr: string }): void {
  const received = upstream.received.filter((request) => request.path.endsWith("/responses"));
  const why = `stdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-2000)}\nstatuses: ${received.map((request) => request.status).join(",")}`;
  expect(result.code, why).toBe(0);
  expect(result.stdout, why).toContain("Done after 2 tool round(s).");
  expect(sent.length, why).toBeGreaterThanOrEqual(3);
  expect(received.map((request) => request.status)).toEqual(sent.map(() => 200));
  sent.forEach((body, index) => {
    const text = body.toString("utf8");
    const model = (JSON.parse(text) as { model: string }).model;
    const expected = text.replace(`"model":${JSON.stringify(model)}`, `"model":${JSON.stringify(UPSTREAM_MODEL)}`);
    expect(received[index]!.raw.toString("utf8"), `request ${index}`).toBe(expected);
  });
  // the tool loop's last request sent both calls back, each after the upstream's own reasoning item, its blob as the upstream gave it
  const last = received.at(-1)!.body as { input: { type?: string; encrypted_content?: unknown }[] };
  const calls = last.input.flatMap((item, index) => (item.type === "function_call" ? [index] : []));
  expect(calls).toHaveLength(2);
  for (const at of calls) expect(String(last.input[at - 1]!.encrypted_content)).toMatch(/^gAAAAA/);
}

const CODEX = "codex-0.171.0";
const PI = "pi-0.73.1";

describe("same wire, carried: the real clients on an openai-responses route", () => {
  test(`Codex ${pinnedVersion(CODEX)}: a tool loop, every request byte for byte but the model, every one accepted`, { timeout: 120_000 }, async () => {
    writeHome(
      ".codex/config.toml",
      `model = "${CLIENT_MODEL}"
model_provider = "carrierd"
check_for_update_on_startup = false

[model_providers.carrierd]
name = "carrierd"
base_url = "${proxyUrl}/v1"
env_key = "${KEY_VARIABLE}"
wire_api = "responses"
`,
    );
    expectCarried(await run(CODEX, ["exec", "--skip-git-repo-check", "What is the weather in Paris?"], 90_000));
  });

  test(
    `pi ${pinnedVersion(PI)}, api openai-responses: a tool loop, every request byte for byte but the model, every one accepted`,
    { timeout: 120_000 },
    async () => {
      const providers = {
        carrierd: { baseUrl: `${proxyUrl}/v1`, api: "openai-responses", apiKey: KEY_VARIABLE, models: [{ id: CLIENT_MODEL, reasoning: true }] },
      };
      writeHome(".pi/agent/models.json", `${JSON.stringify({ providers }, null, 2)}\n`);
      expectCarried(await run(PI, ["-p", "--provider", "carrierd", "--model", CLIENT_MODEL, "What is the weather in Paris?"], 90_000));
    },
  );
});
