import { afterEach, beforeEach, test } from "vitest";
import { AGENT_FOLLOW_UP, AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { pinnedVersion } from "../support/agent-clients.js";
import { KEY_VARIABLE, opencodeConfig } from "../support/agent-configs.js";

const CLI = "opencode-1.18.33";

/**
 * opencode (`opencode-ai`, pinned in test/agents/opencode-1.18.33/) in `opencode run`, with
 * carrierd as an `@ai-sdk/openai-compatible` provider in its config: a
 * prompt, then the session continued (`--continue`) by a second process.
 * The upstream is a DeepSeek emulator that refuses any tool-call turn resent
 * without its verbatim reasoning.
 */
let stack: AgentStack;
beforeEach(async () => {
  stack = await startAgentStack();
});
afterEach(async () => {
  await stack.stop();
});

test(
  `opencode ${pinnedVersion(CLI)} completes a two-step tool loop through carrierd, and again in the continued session, every upstream request accepted on the first try`,
  CLI_TEST_TIMEOUT,
  async ({ annotate }) => {
    stack.writeHomeFile(".config/opencode/opencode.json", opencodeConfig(stack.baseUrl));
    const env = stack.env({
      [KEY_VARIABLE]: stack.key,
      // no fetch of the models.dev catalogue; background plugin and package look-ups fail at once instead of waiting on the network
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      npm_config_registry: `http://127.0.0.1:${stack.closedPort}/`,
    });
    const first = await runAgent(stack, CLI, ["run", AGENT_PROMPT], env);
    const continued = await runAgent(stack, CLI, ["run", "--continue", AGENT_FOLLOW_UP], env);
    await annotate(await expectToolLoopCompleted(stack, [first, continued]));
  },
);
