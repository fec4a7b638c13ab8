import { afterEach, beforeEach, describe, test } from "vitest";
import { AGENT_FOLLOW_UP, AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { pinnedVersion } from "../support/agent-clients.js";
import { AGENT_MODEL, KEY_VARIABLE, PI_PROVIDERS, piModels } from "../support/agent-configs.js";

const CLI = "pi-0.73.1";

/**
 * pi (`@mariozechner/pi-coding-agent`, pinned in test/agents/pi-0.73.1/) in print
 * mode, with carrierd as a custom provider in `~/.pi/agent/models.json`, on
 * both of its OpenAI wires: a prompt, then the session continued (`-c`) by
 * a second process. The upstream is a DeepSeek emulator that refuses any
 * tool-call turn resent without its verbatim reasoning.
 */
let stack: AgentStack;
beforeEach(async () => {
  stack = await startAgentStack();
});
afterEach(async () => {
  await stack.stop();
});

describe.each(Object.entries(PI_PROVIDERS))(`pi ${pinnedVersion(CLI)}, api %s`, (_, provider) => {
  test(
    "completes a two-step tool loop through carrierd, and again in the continued session, every upstream request accepted on the first try",
    CLI_TEST_TIMEOUT,
    async ({ annotate }) => {
      stack.writeHomeFile(".pi/agent/models.json", piModels(stack.baseUrl));
      // PI_OFFLINE: no update check, package check or telemetry at start (pi's README)
      const env = stack.env({ [KEY_VARIABLE]: stack.key, PI_OFFLINE: "1" });
      const first = await runAgent(stack, CLI, ["-p", "--provider", provider, "--model", AGENT_MODEL, AGENT_PROMPT], env);
      const continued = await runAgent(stack, CLI, ["-p", "-c", "--provider", provider, "--model", AGENT_MODEL, AGENT_FOLLOW_UP], env);
      await annotate(await expectToolLoopCompleted(stack, [first, continued]));
    },
  );
});
