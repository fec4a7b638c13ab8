import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess } from "./cli-process.js";
import { fixtureJson } from "../support/fixtures-dir.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

const PROVIDER_KEY = "sk-provider-secret-7f3a9c1e5b";
const GATEWAY_KEY = "cd-gateway-secret-2b8d4e6f0a";
const WRONG_KEY = "cd-wrong-secret-9e1c3a5b7d";

let upstream: OpenAIUpstream;
let home: string;
let logLines: { level: number; text: string }[];
let reasoning: string;

/**
 * Runs the real CLI gateway at trace level with a provider key that comes
 * from $CARRIERD_HOME/.env, sends traffic that touches every logging path
 * (stream, non-stream, upstream error, bad key), then reads the log file.
 */
beforeAll(async () => {
  upstream = await startOpenAIUpstream({
    answers: {
      kind: "replay",
      models: {
        "deepseek-reasoner": { name: "deepseek/deepseek-reasoning" },
        "bad-temperature": { status: 400, file: "openai/reasoning-model-temperature-error.json" },
      },
    },
  });
  home = mkdtempSync(join(tmpdir(), "carrierd-logs-"));
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, ".env"), `RECORDED_KEY=${PROVIDER_KEY}\n`);
  const routes = join(home, "routes.yaml");
  writeFileSync(
    routes,
    `version: 1\nproviders:\n  recorded: { plugin: openai-compatible, base_url: "${upstream.baseUrl("openai")}", api_key_env: RECORDED_KEY }\nmodels:\n  - { name: "rec/*", provider: recorded }\n`,
  );
  const gateway = await startGatewayProcess(
    ["--port", "0", "--routes", routes, "--log-level", "trace"],
    cleanEnv({ CARRIERD_HOME: home, CARRIERD_API_KEY: GATEWAY_KEY }),
  );
  try {
    const post = (model: string, stream: boolean, key = GATEWAY_KEY) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "How many r's?" }] }),
      }).then((response) => response.text());
    await post("rec/deepseek-reasoner", true);
    await post("rec/deepseek-reasoner", false);
    await post("rec/bad-temperature", false);
    await post("rec/deepseek-reasoner", false, WRONG_KEY);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  const text = readFileSync(join(home, "logs", "carrierd.log"), "utf8");
  logLines = text
    .split("\n")
    .filter(Boolean)
    .map((line) => ({ level: (JSON.parse(line) as { level: number }).level, text: line }));
  reasoning = (fixtureJson("deepseek/deepseek-reasoning.json") as { choices: { message: { reasoning_content: string } }[] }).choices[0]!.message
    .reasoning_content;
});
afterAll(async () => {
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

test("the provider key from .env reached the upstream", () => {
  expect(upstream.received.some((request) => request.headers.authorization === `Bearer ${PROVIDER_KEY}`)).toBe(true);
});

test("the log is JSON lines and saw the traffic", () => {
  expect(logLines.length).toBeGreaterThan(3);
  expect(logLines.some((line) => line.text.includes("upstream rejected the request"))).toBe(true);
});

test("no key and no Authorization header value ever reaches the log file", () => {
  for (const { text } of logLines) {
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain(GATEWAY_KEY);
    expect(text).not.toContain(WRONG_KEY);
    expect(text).not.toMatch(/Bearer [^\s"[]/);
  }
});

test("reasoning text is never logged above debug", () => {
  const fragments = [reasoning.slice(0, 40), "Let's write the word: s-t-r-a-w-b-e-r-r-y", "sometimes people might think it's two"];
  for (const { text } of logLines.filter((line) => line.level > 20)) {
    for (const fragment of fragments) expect(text).not.toContain(fragment);
  }
});
