import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";
import { ask, type Message } from "../../support/stateless-client.js";

/**
 * Azure OpenAI end to end, from a chat-completions client: the emulator
 * answers as Azure does (the key only in `api-key`, the dated API only with
 * `?api-version=`), on a loopback host the plugin cannot recognise as
 * Azure's, so the provider states it with `auth: api-key`
 * (docs/plugins.md#openai-responses).
 */
const KEY = "azure-test-key";
const VERSION = "2025-04-01-preview";
const TOOL = {
  type: "function",
  function: { name: "weather", description: "Weather in a city", parameters: { type: "object", properties: { location: { type: "string" } } } },
};

let upstream: ResponsesUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY, steps: 1, azure: true });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  azure-dated: { plugin: openai-responses, base_url: "${upstream.url}/openai?api-version=${VERSION}", api_key_env: AZURE_OPENAI_API_KEY, auth: api-key }
  azure-v1: { plugin: openai-responses, base_url: ${upstream.url}/openai/v1, api_key_env: AZURE_OPENAI_API_KEY, auth: api-key }
  azure-unstated: { plugin: openai-responses, base_url: ${upstream.url}/openai/v1, api_key_env: AZURE_OPENAI_API_KEY }
models:
  - { name: "dated/*", provider: azure-dated }
  - { name: "v1/*", provider: azure-v1 }
  - { name: "unstated/*", provider: azure-unstated }
carriers:
  - match: { plugin: openai-responses }
    fields: []
`,
    env: { AZURE_OPENAI_API_KEY: KEY },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

test.each([
  ["dated", `/openai/responses?api-version=${VERSION}`],
  ["v1", "/openai/v1/responses"],
])("%s API: a tool conversation goes through with the api-key header, the reasoning item replayed before its call", async (api, path) => {
  const before = upstream.received.length;
  const messages: Message[] = [{ role: "user", content: `Weather in Bergamo? (${api})` }];
  const first = await ask(gateway, { model: `${api}/gpt-5`, tools: [TOOL], messages });
  expect(first.error).toBeUndefined();
  const call = (first.kept.tool_calls as { id: string }[])[0]!;
  messages.push(first.kept, { role: "tool", tool_call_id: call.id, content: "18 C" });
  const second = await ask(gateway, { model: `${api}/gpt-5`, stream: true, tools: [TOOL], messages });
  expect(second.error).toBeUndefined();
  expect(second.kept.content).toEqual(expect.any(String));

  const sent = upstream.received.slice(before);
  expect(sent.map((request) => [request.status, request.path])).toEqual([
    [200, path],
    [200, path],
  ]);
  for (const request of sent) {
    expect(request.headers["api-key"]).toBe(KEY);
    expect(request.headers.authorization).toBeUndefined();
  }
  const input = sent[1]!.body!.input as { type?: string; encrypted_content?: string }[];
  expect(input.map((item) => item.type ?? "message")).toEqual(["message", "reasoning", "function_call", "function_call_output"]);
  expect(input[1]!.encrypted_content).toMatch(/^gAAAAA/);
});

test("without auth, a host that is not Azure's gets the key as a Bearer token, and Azure's 401 reaches the client", async () => {
  const before = upstream.received.length;
  const turn = await ask(gateway, { model: "unstated/gpt-5", messages: [{ role: "user", content: "Hello" }] });
  expect(turn.status).toBe(401);
  expect(turn.error?.message).toContain("Access denied due to invalid subscription key");
  const request = upstream.received[before]!;
  expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
  expect(request.headers["api-key"]).toBeUndefined();
});
