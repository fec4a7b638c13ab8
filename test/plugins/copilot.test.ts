import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { copilotCodec, mergeCopilotRecord } from "../../plugins/copilot/codec.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask } from "../support/stateless-client.js";
import { decodeEvents, fold, upstreamCall, wireBody } from "./support/calls.js";

describe("codec", () => {
  test("streamed opaque fragments concatenate; reasoning_text is reasoning", () => {
    const chunk = (delta: object) => ({ data: JSON.stringify({ id: "c1", model: "gpt-5", choices: [{ index: 0, delta }] }) });
    const parts = decodeEvents(copilotCodec, [
      chunk({ role: "assistant", reasoning_text: "Plan" }),
      chunk({ reasoning_text: " it." }),
      chunk({ reasoning_opaque: "AAA", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] }),
      chunk({ reasoning_opaque: "BBB", tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "f", arguments: "{}" } }] }),
    ]);
    const turn = fold(parts, mergeCopilotRecord);
    expect(turn.reasoningText).toBe("Plan it.");
    expect(turn.nativeRecord).toEqual({ reasoning_text: "Plan it.", reasoning_opaque: "AAABBB" });
    expect(turn.toolCalls.map((call) => call.id)).toEqual(["call_1", "call_2"]);
  });

  test("Gemini via Copilot: a tool call's thought_signature is kept by id and returned on the same call", () => {
    const chunk = (delta: object) => ({ data: JSON.stringify({ id: "c2", model: "gemini-3-pro", choices: [{ index: 0, delta }] }) });
    const turn = fold(
      decodeEvents(copilotCodec, [
        chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "{}", thought_signature: "GSIG" } }] }),
      ]),
      mergeCopilotRecord,
    );
    expect(turn.nativeRecord).toEqual({ tool_signatures: { call_a: "GSIG" } });
    const sent = (
      wireBody(
        copilotCodec,
        upstreamCall({
          plugin: "copilot",
          baseUrl: "https://api.githubcopilot.com",
          model: "gemini-3-pro",
          body: {
            messages: [
              { role: "user", content: "hi" },
              { role: "assistant", content: null, tool_calls: turn.toolCalls, native_record: turn.nativeRecord },
            ],
          },
        }),
      ).body.messages as { tool_calls?: { function: Record<string, unknown> }[] }[]
    )[1]!;
    expect(sent.tool_calls![0]!.function).toEqual({ name: "f", arguments: "{}", thought_signature: "GSIG" });
  });

  test("replay: the stored opaque and text go back together; text never alone; native_record never", () => {
    const body = (assistant: object) =>
      (
        wireBody(
          copilotCodec,
          upstreamCall({
            plugin: "copilot",
            baseUrl: "https://api.githubcopilot.com",
            model: "gpt-5",
            body: { messages: [{ role: "user", content: "hi" }, assistant as never] },
          }),
        ).body.messages as Record<string, unknown>[]
      )[1];
    expect(body({ role: "assistant", content: "ok", native_record: { reasoning_opaque: "OPQ", reasoning_text: "why" } })).toEqual({
      role: "assistant",
      content: "ok",
      reasoning_opaque: "OPQ",
      reasoning_text: "why",
    });
    expect(body({ role: "assistant", content: "ok", reasoning_text: "client text", native_record: { reasoning_text: "why" } })).toEqual({
      role: "assistant",
      content: "ok",
    });
    expect(body({ role: "assistant", content: "ok", reasoning_opaque: "CLIENT", reasoning_text: "t" })).toEqual({
      role: "assistant",
      content: "ok",
      reasoning_opaque: "CLIENT",
      reasoning_text: "t",
    });
    const wire = wireBody(
      copilotCodec,
      upstreamCall({ plugin: "copilot", baseUrl: "https://api.githubcopilot.com", model: "gpt-5", body: { messages: [{ role: "user", content: "hi" }] } }),
    );
    expect(wire.url).toBe("https://api.githubcopilot.com/chat/completions");
    expect(wire.headers.authorization).toBe("Bearer test-key");
  });
});

describe("through the daemon", () => {
  // the chat emulator's copilot flavour is GitHub Copilot's chat API (test/support/openai-upstream.ts)
  let upstream: OpenAIUpstream;
  let gateway: TestGateway;
  const tool = { type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } };
  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ apiKeys: { copilot: "ghu_token" } });
    gateway = await startTestGateway({
      env: { COPILOT_TOKEN: "ghu_token" },
      routes: `version: 1
providers:
  copilot: { plugin: copilot, base_url: ${upstream.baseUrl("copilot")}, api_key_env: COPILOT_TOKEN, headers: { Copilot-Integration-Id: vscode-chat } }
  local: { plugin: openai-compatible, base_url: ${upstream.baseUrl("local")} }
models:
  - { name: copilot-model, provider: copilot, model: gpt-5 }
  - { name: local-model, provider: local, model: local-model }
carriers:
  - match: { plugin: copilot }
    fields: []
  - match: {}
    fields: [reasoning_content]
`,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test.each([false, true])("stream=%s: the concatenated opaque returns to Copilot from a stateless history", async (stream) => {
    const user = { role: "user", content: "Rome and Oslo?" };
    const first = await ask(gateway, { model: "copilot-model", stream, tools: [tool], messages: [user] });
    expect(first.status).toBe(200);
    const issuedText = upstream.requestsFor("copilot").at(-1)!.reasoning;
    expect(issuedText).toMatch(/^Step \d+: the copilot model thinks about "Rome and Oslo\?"\.$/);
    expect(first.reasoning).toBe(issuedText);
    const calls = first.kept.tool_calls as { id: string }[];
    const history = [user, first.kept, ...calls.map((call) => ({ role: "tool", tool_call_id: call.id, content: "mild" }))];
    const second = await ask(gateway, { model: "copilot-model", stream, tools: [tool], messages: history });
    expect(second.status).toBe(200);
    const last = upstream.requestsFor("copilot").at(-1)!;
    const sent = last.body as { messages: Record<string, unknown>[] };
    expect(sent.messages[1]!.reasoning_opaque).toBe(upstream.issuedFor(calls[0]!.id)!.opaque);
    expect(sent.messages[1]!.reasoning_text).toBe(issuedText);
    expect(last.headers["copilot-integration-id"]).toBe("vscode-chat");
    // the same history sent to another plugin's route carries no Copilot state
    await ask(gateway, { model: "local-model", messages: history });
    const raw = upstream.requestsFor("local").at(-1)!.raw;
    expect(raw).not.toContain("reasoning_opaque");
    expect(raw).not.toContain("native_record");
  });
});
