import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { waitFor } from "../support/wait-for.js";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "./cli-process.js";

/**
 * The README's *Add a real provider*, done while carrierd runs: a provider
 * added to routes.yaml whose key is not set yet is named by a warning at
 * the reload and answers 503 naming the variable; once the key is saved in
 * $CARRIERD_HOME/.env it works, with no restart; taken out again, it is
 * refused again.
 */
const root = mkdtempSync(join(tmpdir(), "carrierd-env-reload-"));
const home = join(root, "home");
const routesPath = join(root, "routes.yaml");
const KEY = "env-reload-key-0123456789";
const SECRET = "sk-together-5f0e9a7c31d24b86";
const VARIABLE = "CARRIERD_TEST_TOGETHER_KEY";
/** What the gateway logs when a save of a .env file changed a variable (its name, never its value). */
const ENV_READ = `.env: ${VARIABLE} set, changed or removed; in force now`;

let upstream: OpenAIUpstream;
let gateway: RunningGateway;

function routes(withTogether: boolean): string {
  return `version: 1
providers:
  demo: { plugin: demo }
${withTogether ? `  together: { plugin: openai-compatible, base_url: "${upstream.baseUrl("local")}", api_key_env: ${VARIABLE} }\n` : ""}models:
  - { name: demo, provider: demo, model: demo-reasoner }
${withTogether ? "  - { name: together-r1, provider: together, model: r1 }\n" : ""}carriers:
  - match: {}
    fields: [reasoning_content]
`;
}

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  upstream = await startOpenAIUpstream();
  writeFileSync(routesPath, routes(false));
  gateway = await startGatewayProcess(["--port", "0", "--routes", routesPath], cleanEnv({ CARRIERD_HOME: home, CARRIERD_API_KEY: KEY }));
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  rmSync(root, { recursive: true, force: true });
});

function ask(): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "together-r1", messages: [{ role: "user", content: "What is 1+1?" }] }),
  });
}

/** How many of the gateway's stdout lines so far carry `text`. */
function linesWith(text: string): number {
  return gateway
    .stdout()
    .split("\n")
    .filter((line) => line.includes(text)).length;
}

test("a key saved in .env while carrierd runs is in force after the save; the reload that added its provider warned about it", async () => {
  writeFileSync(routesPath, routes(true));
  await gateway.waitFor(
    new RegExp(`"msg":"provider together: ${VARIABLE} is not set; its models \\(together-r1\\) are not listed and answer 503 until it is"`),
  );
  const refused = await ask();
  expect(refused.status).toBe(503);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
    `set ${VARIABLE} in carrierd's .env file (read again when it is saved)`,
  );

  appendFileSync(join(home, ".env"), `# added while carrierd runs\n${VARIABLE}=${SECRET}\n`);
  await gateway.waitFor(new RegExp(`"msg":"${ENV_READ}"`));
  const answered = await ask();
  expect(answered.status, await answered.clone().text()).toBe(200);
  expect(upstream.received.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
  expect(gateway.stdout()).not.toContain(SECRET);

  const read = linesWith(`"msg":"${ENV_READ}"`);
  writeFileSync(join(home, ".env"), "# nothing here any more\n");
  await waitFor(() => linesWith(`"msg":"${ENV_READ}"`) > read, { what: "the .env change being read" });
  expect((await ask()).status).toBe(503);
});
