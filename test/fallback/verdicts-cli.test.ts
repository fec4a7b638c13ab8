import "reflect-metadata";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import yargs from "yargs";
import { routesCommand } from "../../src/cli/commands/routes.js";
import { verdictsCommand } from "../../src/cli/commands/verdicts.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";

let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  groq: { plugin: openai-compatible, base_url: "${upstream.baseUrl("groq")}" }
models:
  - { name: "groq/*", provider: groq }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

async function verdicts(argv: string[], command: "verdicts" | "routes" = "verdicts"): Promise<string> {
  const printed: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args) => void printed.push(args.join(" ")));
  try {
    await yargs([command, ...argv, "--home", gateway.home])
      .option("home", { type: "string", global: true })
      .command(command === "verdicts" ? verdictsCommand : routesCommand)
      .strict()
      .fail(false)
      .parseAsync();
  } finally {
    spy.mockRestore();
  }
  return printed.join("\n");
}

async function conversation(model: string): Promise<number> {
  const history: Message[] = [{ role: "user", content: `hi ${Math.random()}` }];
  history.push((await ask(gateway, { model, messages: history })).kept, { role: "user", content: "more" });
  const before = upstream.requestsFor("groq").length;
  expect((await ask(gateway, { model, messages: history })).status).toBe(200);
  return upstream.requestsFor("groq").length - before;
}

test("verdicts list --json has the documented shape; clear works on the running gateway, by provider and model", async () => {
  expect(await conversation("groq/openai/gpt-oss-120b")).toBe(2);
  const listed = JSON.parse(await verdicts(["list", "--json"])) as Record<string, unknown>[];
  expect(listed).toEqual([
    {
      provider: "groq",
      host: "127.0.0.1",
      model: "openai/gpt-oss-120b",
      field: "reasoning_content",
      status: 400,
      message: "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]",
      recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    },
  ]);
  expect(await verdicts(["list"])).toContain("groq (127.0.0.1) openai/gpt-oss-120b: reasoning_content rejected with 400");
  const explained = JSON.parse(
    await verdicts(["explain", "--model", "groq/openai/gpt-oss-120b", "--routes", gateway.routesPath, "--json"], "routes"),
  ) as Record<string, unknown>;
  expect(explained).toMatchObject({ fields: ["reasoning_content"], verdicts: [{ field: "reasoning_content", status: 400 }], effective: [] });

  expect(await verdicts(["clear", "--model", "some-other-model"])).toContain("cleared 0");
  expect(await conversation("groq/openai/gpt-oss-120b")).toBe(1);
  expect(await verdicts(["clear", "--provider", "groq", "--model", "openai/gpt-oss-120b"])).toContain("cleared 1");
  // the gateway reads verdicts per request from state.db: no restart, no signal
  expect(await conversation("groq/openai/gpt-oss-120b")).toBe(2);
});
