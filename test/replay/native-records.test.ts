import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, type Message } from "../support/stateless-client.js";

/**
 * Native records (replay rules 6–7, docs/sessions-and-replay.md#replay-rules; docs/plugins.md#5-the-native-record): stored after validation against
 * the owning plugin's schema, replayed only to that plugin, same model
 * family, and only while the route's `native` is true.
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    pluginDirs: [fileURLToPath(new URL("./native-plugin", import.meta.url))],
    routes: `version: 1
providers:
  copilot:    { plugin: native-test, base_url: "${upstream.baseUrl("copilot")}" }
  copilotoff: { plugin: native-test, base_url: "${upstream.baseUrl("copilot")}" }
  copilotbad: { plugin: native-test, base_url: "${upstream.baseUrl("copilotbad")}" }
  local:      { plugin: openai-compatible, base_url: "${upstream.baseUrl("local")}" }
models:
  - { name: "copilot/*",    provider: copilot }
  - { name: "copilotoff/*", provider: copilotoff }
  - { name: "copilotbad/*", provider: copilotbad }
  - { name: "local/*",      provider: local }
carriers:
  - match: { provider: copilotoff }
    fields: []
    native: false
  - match: { plugin: native-test }
    fields: []
  - match: {}
    fields: [reasoning_content, reasoning]
`,
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

async function toolTurn(model: string, stream: boolean): Promise<{ history: Message[]; sessionId: string }> {
  const history: Message[] = [{ role: "user", content: `Weather? ${model} ${stream}` }];
  const first = await ask(gateway, { model, stream, messages: history, tools: [WEATHER_TOOL] });
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  history.push(first.kept, { role: "tool", tool_call_id: (first.kept.tool_calls as { id: string }[])[0]!.id, content: "25 C" });
  return { history, sessionId: first.sessionId! };
}

test.each([false, true])("stream=%s: the owning plugin gets its record back (fragments concatenated), and only it", async (stream) => {
  const { history } = await toolTurn("copilot/gpt-5", stream);
  const before = upstream.requestsFor("copilot").length;
  const second = await ask(gateway, { model: "copilot/gpt-5", stream, messages: history, tools: [WEATHER_TOOL] });
  expect(second.status, JSON.stringify(second.error)).toBe(200);
  const [replayed] = assistantsOf(upstream.requestsFor("copilot")[before]!.body);
  expect(replayed!.reasoning_opaque).toMatch(/^opaque-\d+-Zm9v\/\+==$/);
  expect(replayed).not.toHaveProperty("native_record");

  // another plugin never sees it (the emulator answers 400 to a leaked native_record)
  const toLocal = upstream.requestsFor("local").length;
  expect((await ask(gateway, { model: "local/qwen", stream, messages: history })).status).toBe(200);
  const [crossed] = assistantsOf(upstream.requestsFor("local")[toLocal]!.body);
  expect(Object.keys(crossed!).filter((key) => key.includes("opaque") || key === "native_record")).toEqual([]);
});

test("another model family of the same plugin, or a route with native: false, does not get it", async () => {
  const { history } = await toolTurn("copilot/gpt-5", false);
  const otherFamily = await ask(gateway, { model: "copilot/claude-sonnet-4.5", messages: history, tools: [WEATHER_TOOL] });
  expect(otherFamily.status).toBe(400);
  expect(otherFamily.error!.message).toMatch(/invalid reasoning_opaque/);
  const withheld = await ask(gateway, { model: "copilotoff/gpt-5", messages: history, tools: [WEATHER_TOOL] });
  expect(withheld.status).toBe(400);
});

test("a record that fails the plugin's schema is not stored; the turn is", async () => {
  const { sessionId } = await toolTurn("copilotbad/gpt-5", false);
  const session = (await storageOf(gateway).sessions.show(sessionId))!;
  expect(session.turnList).toHaveLength(1);
  expect(session.turnList[0]!.nativeRecord).toBeUndefined();
  expect(session.turnList[0]!.toolCalls).toHaveLength(1);
  // and a valid one is stored whole
  const good = await toolTurn("copilot/gpt-5", true);
  expect((await storageOf(gateway).sessions.show(good.sessionId))!.turnList[0]!.nativeRecord).toEqual({
    type: "native-test.assistant",
    opaque: expect.stringMatching(/^opaque-\d+-Zm9v\/\+==$/),
  });
});
