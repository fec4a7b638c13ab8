// The carrierd the benchmarks measure, and the history they send it: shared
// by the suite (run.mjs), the quick A/B (quick.mjs) and the build
// comparison (compare.mjs), so all three measure the same request.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPinned } from "./processes.mjs";

export const KEY = "bench-key-0123456789";

/**
 * The route table: the bench upstream behind a must_echo route, the most
 * demanding replay. `bench-paced` is the same upstream thinking for a while
 * before the rest of its answer, `bench-repeat` the same answer every turn
 * (see upstream.mjs). `bench-responses` is the same upstream's Responses
 * API behind an `openai-responses` route: a Responses client there is
 * carried (the `codex-same-wire` workload of agents.mjs).
 */
export function routesYaml(upstreamPort, extraModel = "", { responses = true } = {}) {
  // a build from before the openai-responses plugin refuses a table naming it: `responses: false` leaves its routes out
  const responsesProvider = responses ? `\n  bench-responses: { plugin: openai-responses, base_url: "http://127.0.0.1:${upstreamPort}/v1" }` : "";
  const responsesModels = responses
    ? `\n  - { name: bench-responses, provider: bench-responses, model: bench-reasoner }\n  - { name: bench-responses-paced, provider: bench-responses, model: bench-reasoner-paced }`
    : "";
  return `version: 1
providers:
  bench: { plugin: openai-compatible, base_url: "http://127.0.0.1:${upstreamPort}/v1" }${responsesProvider}
models:
  - { name: bench, provider: bench, model: bench-reasoner }
  - { name: bench-paced, provider: bench, model: bench-reasoner-paced }
  - { name: bench-repeat, provider: bench, model: bench-reasoner-repeat }${responsesModels}${extraModel}
carriers:
  # must_echo with reasoning_content: the most demanding replay route
  - match: { provider: bench }
    fields: [reasoning_content]
    must_echo: true
`;
}

/**
 * The carried route table: the instant Anthropic upstream (anthropic-upstream.mjs)
 * behind an Anthropic route, so a Messages request goes upstream as sent.
 */
export function anthropicRoutesYaml(upstreamPort) {
  return `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: "http://127.0.0.1:${upstreamPort}", api_key_env: BENCH_ANTHROPIC_KEY }
models:
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5-20250929 }
carriers:
  - match: {}
    fields: [reasoning_content]
`;
}

/**
 * Starts `bin/carrierd gateway` from `checkout` (this one by default) on
 * `core` (0 by default), with its routes.yaml and $CARRIERD_HOME under `dir`. `nodeFlags`
 * go to node before the script; `env` is added to its environment (e.g.
 * CARRIERD_EVENTS for the Redis event bus); `routesOf` writes its route table
 * (routesYaml by default, anthropicRoutesYaml for the carried route).
 */
export async function startCarrierd(
  upstreamPort,
  dir,
  { checkout = fileURLToPath(new URL("..", import.meta.url)), nodeFlags = [], env = {}, core = 0, routesOf = routesYaml } = {},
) {
  // the default layout: routes.yaml in the working directory, state.db under $CARRIERD_HOME
  const home = join(dir, "home");
  mkdirSync(home, { recursive: true });
  const routes = join(dir, "routes.yaml");
  writeFileSync(routes, routesOf(upstreamPort));
  const handle = await startPinned(
    core,
    [...nodeFlags, join(checkout, "bin/carrierd"), "gateway", "--port", "0", "--routes", routes, "--log-level", process.env.BENCH_LOG_LEVEL ?? "warn"],
    {
      CARRIERD_HOME: home,
      CARRIERD_API_KEY: KEY,
      BENCH_ANTHROPIC_KEY: "sk-ant-bench",
      ...env,
    },
  );
  return { ...handle, routes, home };
}

/** A `turns`-turn history the way a stateless frontend resends it: visible text only, no reasoning; with `session`, under that X-Session-Id. */
export async function buildHistory(port, turns = 20, key = KEY, { model = "bench", session } = {}) {
  const messages = [{ role: "system", content: "You are a benchmark." }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: "user", content: `question ${i}: ${"lorem ipsum ".repeat(20)}` });
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(session ? { "x-session-id": session } : {}) },
      body: JSON.stringify({ model, messages }),
    });
    const body = await response.json();
    messages.push({ role: "assistant", content: body.choices[0].message.content });
  }
  messages.push({ role: "user", content: "and now?" });
  return messages;
}
