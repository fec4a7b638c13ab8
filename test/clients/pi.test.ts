import { afterEach, beforeEach, describe, test } from "vitest";
import { AGENT_MODEL, AGENT_PROMPT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";

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

describe.each(["openai-completions", "openai-responses"] as const)("pi 0.73.1, api %s", (api) => {
  test("completes a two-step tool loop through carrierd, every upstream request accepted on the first try", { timeout: 60_000 }, async ({ annotate }) => {
    stack.writeHomeFile(".pi/agent/models.json", piModels(stack.baseUrl, api));
    const run = await runAgent(
      stack,
      "pi",
      ["-p", "--provider", "carrierd", "--model", AGENT_MODEL, AGENT_PROMPT],
      // PI_OFFLINE: no update check, package check or telemetry at start (pi's README)
      stack.env({ CARRIERD_API_KEY: stack.key, PI_OFFLINE: "1" }),
      45_000,
    );
    await annotate(await expectToolLoopCompleted(stack, run));
  });
});
