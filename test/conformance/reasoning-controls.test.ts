import { afterEach, afterAll, beforeAll, describe, expect, test } from "vitest";
import { applyReasoningControls as applyWithDialect } from "../../plugins/openai-compatible/reasoning-controls.js";
import type { ChatRequest, ReasoningControls } from "../../src/providers/contract.js";
import { resolveDialect } from "../../src/routing/routes/request-dialect.js";
import { readSse } from "../support/gateway.js";
import { startConformance, type ConformanceSetup } from "./harness.js";

const base = (): ChatRequest => ({ model: "m", messages: [{ role: "user", content: "hi" }] });
const on = (effort?: string) => ({ enabled: true, effort });
const off = { enabled: false, effort: undefined };
/** With the dialect a route table without `dialects` resolves for the host: the shipped defaults. */
const applyReasoningControls = (body: ChatRequest, controls: ReasoningControls, host: string) =>
  applyWithDialect(body, controls, resolveDialect([], { id: "p", plugin: "openai-compatible", host, headers: {} }, body.model).dialect);

describe("applyReasoningControls: each host gets its own spelling, strict hosts nothing extra", () => {
  test("no controls: the body itself, untouched", () => {
    const body = base();
    expect(applyReasoningControls(body, on(), "api.deepseek.com")).toBe(body);
  });

  test.each([
    ["api.openai.com", { reasoning_effort: "high" }],
    ["api.groq.com", { reasoning_effort: "high" }],
    ["127.0.0.1", { reasoning_effort: "high" }],
    ["api.deepseek.com", { reasoning_effort: "high" }],
    ["openrouter.ai", { reasoning: { effort: "high" } }],
    ["api.moonshot.ai", {}],
    ["api.mistral.ai", {}],
    ["api.githubcopilot.com", {}],
  ])("effort on %s", (host, extra) => {
    const body = { ...base(), reasoning_effort: "high" };
    expect(applyReasoningControls(body, on("high"), host)).toEqual({ ...base(), ...extra });
    expect(body.reasoning_effort).toBe("high"); // the canonical body is never mutated
  });

  test.each([
    ["api.deepseek.com", { thinking: { type: "disabled" } }],
    ["open.bigmodel.cn", { thinking: { type: "disabled" } }],
    ["api.moonshot.cn", { thinking: { type: "disabled" } }],
    ["dashscope-intl.aliyuncs.com", { enable_thinking: false }],
    ["openrouter.ai", { reasoning: { enabled: false } }],
    ["api.mistral.ai", {}],
    ["api.cerebras.ai", {}],
  ])("disabled on %s", (host, extra) => {
    expect(applyReasoningControls(base(), off, host)).toEqual({ ...base(), ...extra });
  });

  test("disabling overrides the route's request_extra thinking flag", () => {
    const body = { ...base(), thinking: { type: "enabled", clear_thinking: false } };
    expect(applyReasoningControls(body, off, "api.z.ai").thinking).toEqual({ type: "disabled" });
  });

  test("OpenRouter keeps the other keys of a client-sent reasoning object", () => {
    expect(applyReasoningControls({ ...base(), reasoning: { exclude: true } }, on("low"), "openrouter.ai").reasoning).toEqual({ exclude: true, effort: "low" });
  });

  test("effort 'none' disables where there is a switch, and stays OpenAI's 'none' where there is not", () => {
    expect(applyReasoningControls(base(), on("none"), "api.deepseek.com")).toEqual({ ...base(), thinking: { type: "disabled" } });
    expect(applyReasoningControls(base(), on("none"), "api.openai.com")).toEqual({ ...base(), reasoning_effort: "none" });
  });
});

describe("end to end through the gateway and the emulated upstream", () => {
  let setup: ConformanceSetup;
  beforeAll(async () => {
    setup = await startConformance();
  });
  afterAll(() => setup?.stop());
  // every answer of /v1/responses here is checked against the Open Responses spec
  afterEach(() => setup?.spec.verify());
  const last = () => setup.upstream.requests[setup.upstream.requests.length - 1]!;

  test("chat reasoning_effort and responses reasoning.effort reach the upstream as reasoning_effort; model_options never does", async () => {
    await setup.gateway.post("/v1/chat/completions", { model: "deepseek-reasoner", reasoning_effort: "low", messages: [{ role: "user", content: "hi" }] });
    expect(last().reasoning_effort).toBe("low");
    await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "hi", reasoning: { effort: "high", summary: "auto" } });
    expect(last().reasoning_effort).toBe("high");
    expect(last()).not.toHaveProperty("reasoning");
    expect(last()).not.toHaveProperty("model_options");
  });

  test("model_options.reasoning.enabled: false suppresses reasoning in chat streams and bodies", async () => {
    const streamed = await setup.gateway.post("/v1/chat/completions", {
      model: "deepseek-reasoner",
      stream: true,
      model_options: { reasoning: { enabled: false } },
      messages: [{ role: "user", content: "hi" }],
    });
    const { events } = await readSse(streamed);
    const deltas = events.map((event) => (event as { choices: { delta: Record<string, unknown> }[] }).choices[0]?.delta ?? {});
    // carried (docs/api.md#carried-chat-completions): carrierd's own key never goes upstream, the loopback host's (fallback)
    // dialect has no switch to send, and the answer is the host's: what it streams reaches the client
    expect(last()).not.toHaveProperty("model_options");
    expect(last()).not.toHaveProperty("thinking");
    expect(deltas.some((delta) => typeof delta.reasoning_content === "string" && delta.reasoning_content.length > 0)).toBe(true);
    expect(deltas.some((delta) => typeof delta.content === "string" && delta.content.length > 0)).toBe(true);
    const whole = await setup.gateway.post("/v1/chat/completions", {
      model: "demo",
      model_options: { reasoning: { enabled: false } },
      messages: [{ role: "user", content: "hi" }],
    });
    expect(((await whole.json()) as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message).not.toHaveProperty("reasoning_content");
  });
});
