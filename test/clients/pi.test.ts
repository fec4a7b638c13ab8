import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { AGENT_MODEL, AGENT_PROMPT, runAgent, startAgentStack, upstreamPerTurn, type AgentStack } from "../support/agent-cli.js";

/**
 * pi (`@mariozechner/pi-coding-agent`, pinned in devDependencies) in print
 * mode, with carrierd as a custom provider in `~/.pi/agent/models.json`, on
 * both of its OpenAI wires. The upstream is a DeepSeek emulator that refuses
 * any tool-call turn resent without its verbatim reasoning.
 */
let stack: AgentStack;
beforeEach(async () => {
  stack = await startAgentStack();
});
afterEach(async () => {
  await stack.stop();
});

/** The models.json the README shows, pointed at this run's gateway. */
export function piModels(baseUrl: string, api: "openai-completions" | "openai-responses"): string {
  const provider = { baseUrl, api, apiKey: "CARRIERD_API_KEY", models: [{ id: AGENT_MODEL, reasoning: true }] };
  return `${JSON.stringify({ providers: { carrierd: provider } }, null, 2)}\n`;
}

describe.each(["openai-completions", "openai-responses"] as const)("pi 0.73.1 over %s", (api) => {
  test("completes a two-step tool loop through carrierd; every upstream request is accepted on the first try", { timeout: 90_000 }, async () => {
    stack.writeHomeFile(".pi/agent/models.json", piModels(stack.baseUrl, api));
    const run = await runAgent(
      stack,
      "pi",
      ["-p", "--provider", "carrierd", "--model", AGENT_MODEL, AGENT_PROMPT],
      stack.env({ CARRIERD_API_KEY: stack.key, PI_OFFLINE: "1" }),
      60_000,
    );
    const cost = upstreamPerTurn(stack);
    console.log(`pi ${api}: exit ${run.code} in ${run.ms} ms; ${JSON.stringify(cost)}; answers ${stack.upstream.exchanges.map((e) => e.answer + (e.tool ? `:${e.tool}` : "")).join(", ")}`);
    if (run.code !== 0) console.log(run.stdout, run.stderr, stack.upstream.exchanges.map((e) => e.reason));
    expect(run.timedOut).toBe(false);
    expect(stack.upstream.exchanges.map((exchange) => exchange.reason ?? exchange.answer)).toEqual(["tool_call", "tool_call", "final"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`The notes say ${stack.files.map((file) => file.marker).join(" and ")}.`);
    expect(cost).toMatchObject({ refused: 0, perTurn: 1 });
  });
});
