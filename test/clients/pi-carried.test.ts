import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, expect, test } from "vitest";
import { AGENT_FOLLOW_UP, AGENT_PROMPT, CLI_TEST_TIMEOUT, expectToolLoopCompleted, runAgent, startAgentStack, type AgentStack } from "../support/agent-cli.js";
import { pinnedVersion } from "../support/agent-clients.js";
import { AGENT_MODEL, KEY_VARIABLE, PI_PROVIDERS, piModels } from "../support/agent-configs.js";

const CLI = "pi-0.73.1";

/**
 * pi on its `openai-completions` wire, on an `openai-compatible` route: its
 * requests are carried (docs/api.md#carried-chat-completions). A recorder
 * between pi and carrierd keeps pi's bytes; the DeepSeek emulator keeps what
 * it received. Each upstream body is pi's body byte for byte but the one
 * listed exception met here: the two names the route's dialect spells for a
 * host that knows only `system` and `max_tokens` (pi sends OpenAI's
 * `developer` and `max_completion_tokens`). pi sends its tool-call turns'
 * `reasoning_content` back as it got it, so replay, which would put back
 * what a client dropped, changes nothing; the route's model name is the one
 * pi asks for.
 */
let stack: AgentStack;
let recorder: Server;
const sent: string[] = [];
beforeEach(async () => {
  stack = await startAgentStack();
  const target = new URL(stack.baseUrl);
  recorder = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      if (request.url?.endsWith("/chat/completions")) sent.push(body.toString("utf8"));
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== "host" && name !== "content-length")) as Record<
        string,
        string
      >;
      void fetch(`${target.origin}${request.url}`, { method: request.method, headers, body: request.method === "POST" ? body : undefined }).then(
        async (answer) => {
          response.writeHead(
            answer.status,
            Object.fromEntries([...answer.headers].filter(([name]) => name !== "content-length" && name !== "content-encoding")),
          );
          for await (const chunk of answer.body ?? []) response.write(chunk);
          response.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
});
afterEach(async () => {
  await new Promise<void>((resolve) => recorder.close(() => resolve()));
  await stack.stop();
});

/** pi's body as the fallback dialect spells it (docs/routes.md#dialects): `developer` sent as `system`, the token limit as `max_tokens`, at the end. */
function inDialect(text: string): string {
  const limit = /,"max_completion_tokens":(\d+)/.exec(text);
  const renamed = text.replace('{"role":"developer",', '{"role":"system",');
  return limit ? `${renamed.replace(limit[0], "").slice(0, -1)},"max_tokens":${limit[1]}}` : renamed;
}

test(
  `pi ${pinnedVersion(CLI)} (openai-completions): the upstream gets pi's bytes but the dialect's names, every request accepted first time`,
  CLI_TEST_TIMEOUT,
  async ({ annotate }) => {
    const provider = PI_PROVIDERS["openai-completions"];
    const recorded = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/v1`;
    stack.writeHomeFile(".pi/agent/models.json", piModels(recorded));
    const env = stack.env({ [KEY_VARIABLE]: stack.key, PI_OFFLINE: "1" });
    const first = await runAgent(stack, CLI, ["-p", "--provider", provider, "--model", AGENT_MODEL, AGENT_PROMPT], env);
    const continued = await runAgent(stack, CLI, ["-p", "-c", "--provider", provider, "--model", AGENT_MODEL, AGENT_FOLLOW_UP], env);
    await annotate(await expectToolLoopCompleted(stack, [first, continued]));

    const received = stack.upstream.exchanges.map((exchange) => exchange.raw);
    expect(received).toHaveLength(sent.length);
    received.forEach((raw, index) => expect(raw).toBe(inDialect(sent[index]!)));
    // pi's earlier tool-call turns went with the reasoning DeepSeek issued for them
    const last = JSON.parse(received.at(-1)!) as { messages: { role: string; tool_calls?: unknown[]; reasoning_content?: string }[] };
    const toolTurns = last.messages.filter((message) => message.role === "assistant" && message.tool_calls?.length);
    expect(toolTurns.length).toBeGreaterThan(0);
    for (const message of toolTurns) expect(message.reasoning_content).toMatch(/^Turn \d+ — I should read /);
  },
);
