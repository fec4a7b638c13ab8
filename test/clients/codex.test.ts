import { afterEach, beforeEach, test } from "vitest";
import { AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { codexConfig, KEY_VARIABLE, pinnedVersion } from "../support/agent-configs.js";

/**
 * Codex (`@openai/codex`, pinned in devDependencies) in `codex exec`, on its
 * only wire (the Responses API), with carrierd as a custom
 * `[model_providers]` entry and every feature at its default (so its
 * requests carry a `namespace` tool and a hosted `web_search` tool). The
 * upstream is a DeepSeek emulator that refuses any tool-call turn resent
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
  `Codex ${pinnedVersion("@openai/codex")} completes a two-step tool loop through carrierd, every upstream request accepted on the first try`,
  CLI_TEST_TIMEOUT,
  async ({ annotate }) => {
    stack.writeHomeFile(".codex/config.toml", codexConfig(stack.baseUrl));
    // outside a git repository codex exec asks for this flag; it changes nothing else
    const run = await runAgent(stack, "codex", ["exec", "--skip-git-repo-check", AGENT_PROMPT], stack.env({ [KEY_VARIABLE]: stack.key }));
    await annotate(await expectToolLoopCompleted(stack, run));
  },
);
