import { afterEach, beforeEach, describe, test } from "vitest";
import { AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { AGENT_MODEL, KEY_VARIABLE, PI_PROVIDERS, pinnedVersion, piModels } from "../support/agent-configs.js";

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

describe.each(Object.entries(PI_PROVIDERS))(`pi ${pinnedVersion("@mariozechner/pi-coding-agent")}, api %s`, (_, provider) => {
  test("completes a two-step tool loop through carrierd, every upstream request accepted on the first try", CLI_TEST_TIMEOUT, async ({ annotate }) => {
    stack.writeHomeFile(".pi/agent/models.json", piModels(stack.baseUrl));
    const run = await runAgent(
      stack,
      "pi",
      ["-p", "--provider", provider, "--model", AGENT_MODEL, AGENT_PROMPT],
      // PI_OFFLINE: no update check, package check or telemetry at start (pi's README)
      stack.env({ [KEY_VARIABLE]: stack.key, PI_OFFLINE: "1" }),
    );
    await annotate(await expectToolLoopCompleted(stack, run));
  });
});
