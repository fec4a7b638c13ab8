import { afterEach, beforeEach, expect, test } from "vitest";
import { AGENT_FOLLOW_UP, AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { pinnedVersion } from "../support/agent-clients.js";
import { codexConfig, KEY_VARIABLE } from "../support/agent-configs.js";

const CLI = "codex-0.171.0";

/**
 * Codex (`@openai/codex`, pinned in test/agents/codex-0.171.0/) in `codex exec`, on its
 * only wire (the Responses API, `store: false`), with carrierd as a custom
 * `[model_providers]` entry and every feature at its default (so its
 * requests carry a `namespace` tool and a hosted `web_search` tool): a
 * prompt, then the session resumed (`codex exec resume --last`) by a second
 * process, which resends its reasoning items without their content. The
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
  `Codex ${pinnedVersion(CLI)} completes a two-step tool loop through carrierd, and again in the resumed session, every upstream request accepted on the first try`,
  CLI_TEST_TIMEOUT,
  async ({ annotate }) => {
    stack.writeHomeFile(".codex/config.toml", codexConfig(stack.baseUrl));
    const env = stack.env({ [KEY_VARIABLE]: stack.key });
    // outside a git repository codex exec asks for this flag; it changes nothing else
    const first = await runAgent(stack, CLI, ["exec", "--skip-git-repo-check", AGENT_PROMPT], env);
    const resumed = await runAgent(stack, CLI, ["exec", "--skip-git-repo-check", "resume", "--last", AGENT_FOLLOW_UP], env);
    await annotate(await expectToolLoopCompleted(stack, [first, resumed]));
  },
);

test("the control: with no reasoning field on DeepSeek's carrier route, Codex's second request is DeepSeek's 400", CLI_TEST_TIMEOUT, async () => {
  await stack.stop();
  stack = await startAgentStack({ replay: false });
  stack.writeHomeFile(".codex/config.toml", codexConfig(stack.baseUrl));
  const run = await runAgent(stack, CLI, ["exec", "--skip-git-repo-check", AGENT_PROMPT], stack.env({ [KEY_VARIABLE]: stack.key }));
  expect(run.timedOut).toBe(false);
  expect(run.code).not.toBe(0);
  expect(run.stdout).not.toContain("The notes say");
  const [first, second] = stack.upstream.exchanges;
  expect([first?.answer, second?.answer]).toEqual(["tool_call", "rejected"]);
  expect(second!.reason).toMatch(/has no reasoning_content$/);
  expect(run.stderr).toContain("The `reasoning_content` in the thinking mode must be passed back to the API.");
});
