import { fileURLToPath } from "node:url";
import { beforeAll, expect, test } from "vitest";
import type { ProviderConfig } from "../../src/providers/contract.js";
import { loadRoutesFile } from "../../src/routing/routes/load-routes.js";
import type { RouteTable } from "../../src/routing/routes/route-table.js";

/** The shipped routes.yaml resolves each provider of 2026 to the route docs/routes.md gives its source for. */
let table: RouteTable;
beforeAll(async () => {
  const loaded = await loadRoutesFile(fileURLToPath(new URL("../../routes.yaml", import.meta.url)), {
    knownPlugins: new Set(["demo", "openai-compatible", "openai-responses", "anthropic", "gemini", "bedrock", "copilot"]),
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  table = loaded.table;
});

const provider = (host: string, plugin = "openai-compatible"): ProviderConfig => ({
  id: host,
  plugin,
  baseUrl: `https://${host}/v1`,
  host,
  headers: {},
});

test("DeepSeek V4's models are shipped, on the must-echo DeepSeek route", () => {
  for (const name of ["deepseek-v4-pro", "deepseek-v4-flash"]) {
    const resolved = table.resolveModel(name)!;
    expect(resolved.upstreamModel).toBe(name);
    expect(table.policyFor(resolved.provider, resolved.upstreamModel)).toMatchObject({ fields: ["reasoning_content"], mustEcho: true });
  }
});

test("MiniMax is asked for reasoning_split and gets reasoning_details back; Novita keeps its route without the switch", () => {
  expect(table.policyFor(provider("api.minimax.io"), "MiniMax-M2.7")).toMatchObject({
    fields: ["reasoning_content", "reasoning_details"],
    requestExtra: { reasoning_split: true },
  });
  expect(table.policyFor(provider("api.novita.ai"), "minimax/minimax-m2")).toMatchObject({
    fields: ["reasoning_content", "reasoning_details"],
    requestExtra: undefined,
  });
});

test("Gemini's OpenAI-compatible endpoint gets extra_content only; the native gemini provider on the same host is not an OpenAI-style route", () => {
  const resolved = table.resolveModel("gemini-openai/gemini-3-flash-preview")!;
  expect(resolved.upstreamModel).toBe("gemini-3-flash-preview");
  expect(table.policyFor(resolved.provider, resolved.upstreamModel).fields).toEqual(["extra_content"]);
  const native = table.resolveModel("gemini-3-pro-preview")!;
  expect(native.provider.plugin).toBe("gemini");
});

test("Kimi K2.6 keeps all thinking, GLM does not clear it, Qwen 3.6 preserves it", () => {
  expect(table.policyFor(provider("api.moonshot.ai"), "kimi-k2.6").requestExtra).toEqual({ thinking: { type: "enabled", keep: "all" } });
  expect(table.policyFor(provider("api.z.ai"), "glm-5").requestExtra).toEqual({ thinking: { type: "enabled", clear_thinking: false } });
  expect(table.policyFor(provider("dashscope-intl.aliyuncs.com"), "qwen3.6-plus").requestExtra).toEqual({ preserve_thinking: true });
});

test("Claude Opus 4.7 is shipped on adaptive thinking with its summary displayed", () => {
  const resolved = table.resolveModel("claude-opus-4-7")!;
  expect(resolved.params).toMatchObject({ thinking: { type: "adaptive", display: "summarized" } });
});

test("Fireworks is asked to keep all reasoning history; Kimi K2.7 Code is must-echo with no thinking flag of carrierd's", () => {
  expect(table.policyFor(provider("api.fireworks.ai"), "accounts/fireworks/models/kimi-k2p6")).toMatchObject({
    fields: ["reasoning_content"],
    requestExtra: { reasoning_history: "preserved" },
  });
  const code = table.resolveModel("kimi-k2.7-code")!;
  expect(table.policyFor(code.provider, code.upstreamModel)).toMatchObject({ fields: ["reasoning_content"], mustEcho: true, requestExtra: undefined });
});

test("Claude Opus 4.6 is shipped on adaptive thinking (budget_tokens is deprecated there)", () => {
  expect(table.resolveModel("claude-opus-4-6")!.params).toMatchObject({ thinking: { type: "adaptive" } });
});

test("OpenAI and xAI are served by the Responses API plugin, on a route with no message field (their reasoning is its native record)", () => {
  for (const [name, host] of [
    ["openai/gpt-5", "api.openai.com"],
    ["xai/grok-4", "api.x.ai"],
  ] as const) {
    const resolved = table.resolveModel(name)!;
    expect(resolved.provider).toMatchObject({ plugin: "openai-responses", host });
    expect(table.policyFor(resolved.provider, resolved.upstreamModel)).toMatchObject({ fields: [], native: true, mustEcho: false });
  }
  // an Azure OpenAI provider an operator adds gets the same route
  expect(table.policyFor(provider("contoso.openai.azure.com", "openai-responses"), "gpt-5")).toMatchObject({ fields: [], native: true });
});
