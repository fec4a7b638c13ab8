import { afterEach, beforeEach, test } from "vitest";
import { AGENT_MODEL, AGENT_PROMPT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";

/**
 * opencode (`opencode-ai`, pinned in devDependencies) in `opencode run`, with
 * carrierd as an `@ai-sdk/openai-compatible` provider in its config. The
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

/** The opencode.json the README shows, pointed at this run's gateway. */
export function opencodeConfig(baseUrl: string): string {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      carrierd: {
        npm: "@ai-sdk/openai-compatible",
        name: "carrierd",
        options: { baseURL: baseUrl, apiKey: "{env:CARRIERD_API_KEY}" },
        models: { [AGENT_MODEL]: { name: "DeepSeek Reasoner (carrierd)" } },
      },
    },
    model: `carrierd/${AGENT_MODEL}`,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

test(
  "opencode 1.18.33 completes a two-step tool loop through carrierd, every upstream request accepted on the first try",
  { timeout: 60_000 },
  async ({ annotate }) => {
    stack.writeHomeFile(".config/opencode/opencode.json", opencodeConfig(stack.baseUrl));
    const run = await runAgent(
      stack,
      "opencode",
      ["run", AGENT_PROMPT],
      stack.env({
        CARRIERD_API_KEY: stack.key,
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        // its background plugin and package look-ups fail at once instead of waiting on the network
        npm_config_registry: `http://127.0.0.1:${stack.closedPort}/`,
      }),
      45_000,
    );
    await annotate(await expectToolLoopCompleted(stack, run));
  },
);
