import { describe, expect, test } from "vitest";
import { openAICompatibleCodec } from "../../plugins/openai-compatible/codec.js";
import { applyRequestNames } from "../../plugins/openai-compatible/request-names.js";
import type { ChatRequest, RequestDialect } from "../../src/providers/contract.js";
import { upstreamCall, wireBody } from "./support/calls.js";

const dialect = (developerRole: RequestDialect["developerRole"], tokenLimit: RequestDialect["tokenLimit"]): RequestDialect => ({
  effort: "reasoning_effort",
  disable: "none",
  developerRole,
  tokenLimit,
});
const SYSTEM_MAX = dialect("system", "max_tokens");
const OPENAI = dialect("developer", "max_completion_tokens");

describe("applyRequestNames: developer messages and the token limit as the host spells them", () => {
  test("nothing to re-spell: the body itself, untouched", () => {
    const body: ChatRequest = {
      model: "m",
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "u" },
      ],
      max_tokens: 10,
    };
    expect(applyRequestNames(body, SYSTEM_MAX)).toBe(body);
    const openai: ChatRequest = { model: "m", messages: [{ role: "developer", content: "d" }], max_completion_tokens: 10 };
    expect(applyRequestNames(openai, OPENAI)).toBe(openai);
  });

  test("developer goes as system where the host knows only system; other messages stay the same objects", () => {
    const user = { role: "user" as const, content: "u" };
    const body: ChatRequest = { model: "m", messages: [{ role: "developer", content: "Answer in French.", name: "ops" }, user] };
    const out = applyRequestNames(body, SYSTEM_MAX);
    expect(out.messages).toEqual([{ role: "system", content: "Answer in French.", name: "ops" }, user]);
    expect(out.messages[1]).toBe(user);
    expect(body.messages[0]!.role).toBe("developer"); // the canonical body is never mutated
  });

  test.each([
    [SYSTEM_MAX, { max_completion_tokens: 64 }, { max_tokens: 64 }],
    [OPENAI, { max_tokens: 64 }, { max_completion_tokens: 64 }],
    // both sent: the host's own name wins, the other is not sent
    [SYSTEM_MAX, { max_tokens: 32, max_completion_tokens: 64 }, { max_tokens: 32 }],
    [OPENAI, { max_tokens: 32, max_completion_tokens: 64 }, { max_completion_tokens: 64 }],
  ])("token limit %#", (spelling, sent, expected) => {
    const body: ChatRequest = { model: "m", messages: [{ role: "user", content: "u" }], ...sent };
    const { model: _model, messages: _messages, ...rest } = applyRequestNames(body, spelling);
    expect(rest).toEqual(expected);
  });

  test("the codec sends what the call's dialect says, alongside the reasoning controls", () => {
    const body = {
      messages: [
        { role: "developer" as const, content: "d" },
        { role: "user" as const, content: "u" },
      ],
      max_completion_tokens: 99,
    };
    const sent = wireBody(
      openAICompatibleCodec,
      upstreamCall({ plugin: "openai-compatible", baseUrl: "https://api.deepseek.com/v1", model: "deepseek-reasoner", body, enabled: false }),
    ).body;
    expect(sent).toMatchObject({ max_tokens: 99, thinking: { type: "disabled" } });
    expect(sent).not.toHaveProperty("max_completion_tokens");
    expect((sent.messages as { role: string }[]).map((message) => message.role)).toEqual(["system", "user"]);
    const toOpenAI = wireBody(
      openAICompatibleCodec,
      upstreamCall({ plugin: "openai-compatible", baseUrl: "https://api.openai.com/v1", model: "gpt-5", body, effort: "low" }),
    ).body;
    expect(toOpenAI).toMatchObject({ max_completion_tokens: 99, reasoning_effort: "low" });
    expect((toOpenAI.messages as { role: string }[])[0]!.role).toBe("developer");
  });
});
