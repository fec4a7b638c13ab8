import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { revisionOf } from "../../src/routing/routes/load-routes.js";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";
import { nextEvent } from "./bus-events.js";

/**
 * routes.yaml `dialects` and `model_family` are part of the table in force:
 * an edit reaches the next request without a restart, through the real
 * gateway to a loopback upstream that records what it receives.
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;

function routes(extra = ""): string {
  return `version: 1
providers:
  acme:    { plugin: openai-compatible, base_url: "${upstream.baseUrl("local")}" }
  copilot: { plugin: native-test, base_url: "${upstream.baseUrl("copilot")}" }
models:
  - { name: "acme/*", provider: acme }
  - { name: "copilot/*", provider: copilot }
carriers:
  - match: { plugin: native-test }
    fields: []
  - match: {}
    fields: [reasoning_content]
${extra}`;
}

/** Saves `text` as routes.yaml and resolves once that table is in force. */
async function save(text: string): Promise<void> {
  const reloaded = nextEvent(gateway, "routes.reloaded", (event) => event.revision === revisionOf(text));
  writeFileSync(gateway.routesPath, text);
  await reloaded;
}

beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    routes: "version: 1\nproviders: {}\nmodels: []\n",
    pluginDirs: [fileURLToPath(new URL("../replay/native-plugin", import.meta.url))],
  });
  await save(routes());
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** What the upstream received for one chat request with a developer message, an effort and a token limit. */
async function sent(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const before = upstream.requestsFor("local").length;
  const response = await gateway.post("/v1/chat/completions", {
    model: "acme/reasoner",
    reasoning_effort: "high",
    max_completion_tokens: 256,
    messages: [
      { role: "developer", content: "Answer briefly." },
      { role: "user", content: "2+2?" },
    ],
    ...extra,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return upstream.requestsFor("local")[before]!.body;
}

const roles = (body: Record<string, unknown>) => (body.messages as { role: string }[]).map((message) => message.role);

test("an edited dialect is in force for the next request, and a broken one is refused while it stays", async () => {
  // no dialects: the OpenAI-style fallback a loopback host gets
  const before = await sent();
  expect(before).toMatchObject({ reasoning_effort: "high", max_tokens: 256 });
  expect(before).not.toHaveProperty("max_completion_tokens");
  expect(roles(before)).toEqual(["system", "user"]);

  await save(
    routes(`dialects:
  - match: { provider: acme }
    effort: openrouter
    disable: enable_thinking
    developer_role: developer
    token_limit: max_completion_tokens
`),
  );
  const after = await sent();
  expect(after).toMatchObject({ reasoning: { effort: "high" }, max_completion_tokens: 256 });
  expect(after).not.toHaveProperty("reasoning_effort");
  expect(after).not.toHaveProperty("max_tokens");
  expect(roles(after)).toEqual(["developer", "user"]);
  expect(await sent({ model_options: { reasoning: { enabled: false } } })).toMatchObject({ enable_thinking: false });

  // a Responses request goes the same way: the Responses layer names no provider's spelling
  const responsesBefore = upstream.requestsFor("local").length;
  const response = await gateway.post("/v1/responses", {
    model: "acme/reasoner",
    input: [
      { role: "developer", content: "Be brief." },
      { role: "user", content: "2+2?" },
    ],
    max_output_tokens: 128,
  });
  expect(response.status).toBe(200);
  const fromResponses = upstream.requestsFor("local")[responsesBefore]!.body;
  expect(fromResponses).toMatchObject({ max_completion_tokens: 128 });
  expect(roles(fromResponses)).toEqual(["developer", "user"]);

  const rejected = nextEvent(gateway, "routes.rejected");
  writeFileSync(gateway.routesPath, routes("dialects:\n  - match: { provider: acme }\n    effort: reasoning.effort\n"));
  const event = (await rejected) as unknown as { errors: { line: number; column: number; message: string }[] };
  expect(event.errors[0]).toMatchObject({ line: 15, column: 13 });
  expect(event.errors[0]!.message).toContain('dialects.0.effort: must be one of "reasoning_effort", "openrouter", "drop"');
  expect(await sent()).toMatchObject({ reasoning: { effort: "high" }, max_completion_tokens: 256 });

  await save(routes());
  expect(await sent()).toMatchObject({ reasoning_effort: "high", max_tokens: 256 });
});

test("an edited model_family decides the next request's replay of a signed record", async () => {
  await save(routes("# no model_family: the shipped rule\n"));
  const history: Message[] = [{ role: "user", content: "Weather in Paris?" }];
  const first = await ask(gateway, { model: "copilot/gpt-5", messages: history, tools: [WEATHER_TOOL] });
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  history.push(first.kept, { role: "tool", tool_call_id: (first.kept.tool_calls as { id: string }[])[0]!.id, content: "25 C" });
  // the emulator answers 400 when a tool-call turn comes back without the opaque state it issued
  const snapshot = "copilot/gpt-5-2025-08-07";
  expect((await ask(gateway, { model: snapshot, messages: history, tools: [WEATHER_TOOL] })).status).toBe(200);

  await save(routes("model_family: { strip: [] }\n"));
  const withheld = await ask(gateway, { model: snapshot, messages: history, tools: [WEATHER_TOOL] });
  expect(withheld.status).toBe(400);
  expect(withheld.error!.message).toMatch(/invalid reasoning_opaque/);

  await save(routes('model_family: { strip: ["-\\\\d{4}-\\\\d{2}-\\\\d{2}$"] }\n'));
  expect((await ask(gateway, { model: snapshot, messages: history, tools: [WEATHER_TOOL] })).status).toBe(200);
});
