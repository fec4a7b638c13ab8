import { describe, expect, test } from "vitest";
import { attachStoredCarriers } from "../../src/routing/carriers/replay.js";
import type { ChatMessage, ProviderConfig } from "../../src/providers/contract.js";
import { formatProblem, parseRoutes } from "../../src/routing/routes/load-routes.js";
import { resolveDialect } from "../../src/routing/routes/request-dialect.js";
import type { RouteTable } from "../../src/routing/routes/route-table.js";
import { SHIPPED_DIALECTS } from "../../src/routing/routes/shipped-dialects.js";
import type { ReplaySource } from "../../src/storage/turns.js";

const PLUGINS = new Set(["demo", "openai-compatible", "anthropic"]);

const HEAD = `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: https://api.deepseek.com/v1 }
  acme: { plugin: openai-compatible, base_url: https://llm.acme.example/v1 }
  claude: { plugin: anthropic, base_url: https://api.anthropic.com }
models:
  - { name: deepseek-reasoner, provider: deepseek }
  - { name: "acme/*", provider: acme }
  - { name: "claude/*", provider: claude }
`;

function problemsOf(text: string): string[] {
  const result = parseRoutes(text, "routes.yaml", { knownPlugins: PLUGINS });
  if (result.ok) throw new Error("expected the table to be rejected");
  return result.problems.map(formatProblem);
}

function tableOf(text: string): RouteTable {
  const result = parseRoutes(text, "routes.yaml", { knownPlugins: PLUGINS });
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.table;
}

const at = (host: string): ProviderConfig => ({ id: "p", plugin: "openai-compatible", host, headers: {} });

describe("the schema checks dialects and model_family, at the offending line", () => {
  test("a value outside a key's spellings names the spellings", () => {
    expect(problemsOf(`${HEAD}dialects:\n  - match: { provider: acme }\n    effort: reasoning.effort\n`)).toEqual([
      'routes.yaml:12:13: dialects.0.effort: must be one of "reasoning_effort", "openrouter", "drop"',
    ]);
    expect(problemsOf(`${HEAD}dialects:\n  - { match: { host: acme.example }, disable: off }\n`)[0]).toBe(
      'routes.yaml:11:47: dialects.0.disable: must be one of "openrouter", "thinking", "enable_thinking", "none"',
    );
    expect(problemsOf(`${HEAD}dialects:\n  - { match: {}, developer_role: assistant, token_limit: max_output_tokens }\n`)).toEqual([
      'routes.yaml:11:34: dialects.0.developer_role: must be one of "developer", "system"',
      'routes.yaml:11:58: dialects.0.token_limit: must be one of "max_tokens", "max_completion_tokens"',
    ]);
  });

  test("a misspelt key is reported at the key, an entry without match or without any key is refused", () => {
    expect(problemsOf(`${HEAD}dialects:\n  - match: { provider: acme }\n    efort: drop\n`)).toEqual(['routes.yaml:12:5: dialects.0: unknown key "efort"']);
    expect(problemsOf(`${HEAD}dialects:\n  - match: { hots: acme.example }\n    effort: drop\n`)).toEqual([
      'routes.yaml:11:14: dialects.0.match: unknown key "hots"',
    ]);
    expect(problemsOf(`${HEAD}dialects:\n  - { effort: drop }\n`)).toEqual(['routes.yaml:11:5: dialects.0: missing required key "match"']);
    expect(problemsOf(`${HEAD}dialects:\n  - match: { provider: acme }\n`)).toEqual([
      "routes.yaml:11:5: dialects.0: names no dialect key (effort, disable, developer_role, token_limit)",
    ]);
  });

  test("model_family.strip must hold regular expressions; a bad one is reported at its item", () => {
    const problems = problemsOf(`${HEAD}model_family:\n  strip:\n    - ":[a-z]+$"\n    - "-(\\\\d{8}$"\n`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^routes\.yaml:13:7: model_family\.strip\.1: not a regular expression \(.+\)$/);
    expect(problemsOf(`${HEAD}model_family: { strip: [x], keep: [y] }\n`)).toEqual(['routes.yaml:10:29: model_family: unknown key "keep"']);
    expect(problemsOf(`${HEAD}model_family: {}\n`)).toEqual(['routes.yaml:10:15: model_family: missing required key "strip"']);
  });
});

describe("a table without dialects gives exactly the shipped spellings", () => {
  test.each([
    ["openrouter.ai", { effort: "openrouter", disable: "openrouter", developerRole: "system", tokenLimit: "max_tokens" }],
    ["api.deepseek.com", { effort: "reasoning_effort", disable: "thinking", developerRole: "system", tokenLimit: "max_tokens" }],
    ["open.bigmodel.cn", { effort: "reasoning_effort", disable: "thinking", developerRole: "system", tokenLimit: "max_tokens" }],
    ["api.moonshot.ai", { effort: "drop", disable: "thinking", developerRole: "system", tokenLimit: "max_tokens" }],
    ["dashscope-intl.aliyuncs.com", { effort: "drop", disable: "enable_thinking", developerRole: "system", tokenLimit: "max_tokens" }],
    ["api.mistral.ai", { effort: "drop", disable: "none", developerRole: "system", tokenLimit: "max_tokens" }],
    ["api.githubcopilot.com", { effort: "drop", disable: "none", developerRole: "system", tokenLimit: "max_tokens" }],
    ["api.openai.com", { effort: "reasoning_effort", disable: "none", developerRole: "developer", tokenLimit: "max_completion_tokens" }],
    ["127.0.0.1", { effort: "reasoning_effort", disable: "none", developerRole: "system", tokenLimit: "max_tokens" }],
  ])("%s", (host, dialect) => {
    expect(resolveDialect([], at(host), "m").dialect).toEqual(dialect);
  });

  test("Kimi K2.7 Code (and its highspeed variant) gets no off switch: it always thinks and errors on thinking disabled", () => {
    for (const model of ["kimi-k2.7-code", "kimi-k2.7-code-highspeed"]) {
      expect(resolveDialect([], at("api.moonshot.ai"), model)).toEqual({
        dialect: { effort: "drop", disable: "none", developerRole: "system", tokenLimit: "max_tokens" },
        from: { effort: "shipped 3", disable: "shipped 3", developerRole: "fallback", tokenLimit: "fallback" },
      });
    }
    expect(resolveDialect([], at("api.moonshot.ai"), "kimi-k2.6").dialect.disable).toBe("thinking");
  });

  test("the shipped dialects are valid routes.yaml entries", () => {
    const yaml = SHIPPED_DIALECTS.map((entry) => `  - ${JSON.stringify(entry)}`).join("\n");
    expect(tableOf(`${HEAD}dialects:\n${yaml}\n`).dialects).toHaveLength(SHIPPED_DIALECTS.length);
  });

  test("the resolved model carries the dialect of its provider's host", () => {
    const table = tableOf(HEAD);
    expect(table.resolveModel("deepseek-reasoner")!.dialect).toMatchObject({ effort: "reasoning_effort", disable: "thinking" });
    expect(table.resolveModel("acme/big")!.dialect).toEqual(resolveDialect([], at("127.0.0.1"), "m").dialect);
  });
});

describe("the file's dialects come first, each key on its own", () => {
  const table = tableOf(`${HEAD}dialects:
  - match: { provider: deepseek, model: "deepseek-v9*" }
    token_limit: max_completion_tokens
  - match: { host: api.deepseek.com }
    effort: openrouter
  - match: { provider: acme }
    effort: drop
    disable: enable_thinking
    developer_role: developer
    token_limit: max_completion_tokens
`);
  const deepseek = table.providers.get("deepseek")!;

  test("an entry changes only the keys it names; the rest come from the next entry that matches, then the shipped ones", () => {
    expect(table.dialectFor(deepseek, "deepseek-reasoner")).toEqual({
      dialect: { effort: "openrouter", disable: "thinking", developerRole: "system", tokenLimit: "max_tokens" },
      from: { effort: "dialects 2", disable: "shipped 2", developerRole: "fallback", tokenLimit: "fallback" },
    });
    expect(table.dialectFor(deepseek, "deepseek-v9-pro").from).toEqual({
      effort: "dialects 2",
      disable: "shipped 2",
      developerRole: "fallback",
      tokenLimit: "dialects 1",
    });
  });

  test("match works as in carriers: by provider, host (with subdomains) and model glob", () => {
    expect(table.resolveModel("acme/x")!.dialect).toEqual({
      effort: "drop",
      disable: "enable_thinking",
      developerRole: "developer",
      tokenLimit: "max_completion_tokens",
    });
    expect(table.dialectFor({ ...deepseek, host: "eu.api.deepseek.com" }, "r1").dialect.effort).toBe("openrouter");
    expect(table.dialectFor({ ...deepseek, host: "api.deepseek.com.evil.io" }, "r1").dialect.effort).toBe("reasoning_effort");
  });
});

describe("model_family: the table's rule decides which signed carriers cross model names", () => {
  const HISTORY: ChatMessage[] = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ];
  const source = (upstreamModel: string): ReplaySource =>
    ({
      id: "turn_1",
      plugin: "anthropic",
      upstreamModel,
      reasoningText: "thought",
      nativeRecord: { type: "anthropic.thinking", blocks: [] },
    }) as unknown as ReplaySource;
  const attached = (table: RouteTable, from: string, to: string) => {
    const resolved = table.resolveModel(`claude/${to}`)!;
    const target = { plugin: "anthropic", upstreamModel: resolved.upstreamModel, effective: [], native: true, pluginHasNative: true, family: resolved.family };
    return attachStoredCarriers(HISTORY, new Map([[1, source(from)]]), target).attached.flatMap((entry) => entry.fields);
  };

  test("without model_family, the shipped rule: a date stamp, an @version or a :variant is the same family", () => {
    const table = tableOf(HEAD);
    expect(table.family.patterns).toEqual([":[a-z0-9._-]+$", "@[a-z0-9._-]+$", "-(\\d{8}|\\d{4}-\\d{2}-\\d{2})$"]);
    expect(attached(table, "claude-sonnet-4-5-20250929", "claude-sonnet-4-5")).toEqual(["native_record"]);
    expect(attached(table, "claude-sonnet-4-5", "claude-haiku-4-5")).toEqual([]);
  });

  test("an operator's strip list replaces it, compiled once for the table", () => {
    const table = tableOf(`${HEAD}model_family:\n  strip: ["-v\\\\d+:\\\\d+$", "-\\\\d{8}$"]\n`);
    expect(table.family.of("Claude-Sonnet-4-5-20250929-V1:0")).toBe("claude-sonnet-4-5");
    expect(attached(table, "claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5")).toEqual(["native_record"]);
    expect(table.family).toBe(table.resolveModel("claude/a")!.family);
    // the shipped rule's :variant is no longer stripped
    expect(attached(tableOf(`${HEAD}model_family: { strip: [] }\n`), "claude-sonnet-4-5:thinking", "claude-sonnet-4-5")).toEqual([]);
  });
});
