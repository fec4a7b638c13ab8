import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { isSeq, parseDocument } from "yaml";
import type { ProviderConfig } from "../../src/providers/contract.js";
import { PluginRegistry } from "../../src/providers/plugin-registry.js";
import { formatProblem, parseRoutes, type RouteProblem } from "../../src/routing/routes/load-routes.js";
import { hostMatches, hostOf, isLocalHost, isLoopbackHost } from "../../src/routing/routes/host-match.js";
import type { RouteTable } from "../../src/routing/routes/route-table.js";

const PLUGINS = new Set(["demo", "openai-compatible"]);
const SHIPPED = fileURLToPath(new URL("../../routes.yaml", import.meta.url));
/** The shipped table may name any shipped plugin. */
const SHIPPED_PLUGINS = (await PluginRegistry.load([])).names;

function problemsOf(text: string): RouteProblem[] {
  const result = parseRoutes(text, "routes.yaml", { knownPlugins: PLUGINS });
  if (result.ok) throw new Error("expected the table to be rejected");
  return result.problems;
}

function tableOf(text: string, knownPlugins: ReadonlySet<string> = PLUGINS): RouteTable {
  const result = parseRoutes(text, "routes.yaml", { knownPlugins });
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.table;
}

const VALID = `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: https://api.deepseek.com/v1, api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo }
carriers:
  - match: { host: api.deepseek.com }
    fields: [reasoning_content]
    must_echo: true
`;

describe("problems name file, line and column", () => {
  test("a wrong version points at its value", () => {
    expect(problemsOf(VALID.replace("version: 1", "version: 2")).map(formatProblem)).toEqual(["routes.yaml:1:10: version: must be equal to constant"]);
  });

  test("an unknown top-level key points at the key", () => {
    const [problem] = problemsOf(`${VALID}extras: true\n`);
    expect(problem).toMatchObject({ line: 11, column: 1 });
    expect(problem!.message).toBe('routes.yaml: unknown key "extras"');
  });

  test("an unknown key inside a provider points at that key, not at the provider", () => {
    const [problem] = problemsOf(VALID.replace("demo: { plugin: demo }", "demo: { plugin: demo, base_ur: x }"));
    expect(problem).toMatchObject({ line: 3, column: 25 });
    expect(problem!.message).toBe('providers.demo: unknown key "base_ur"');
  });

  test("an unknown key in a carrier's match names the key", () => {
    const [problem] = problemsOf(VALID.replace("match: { host: api.deepseek.com }", "match: { hots: api.deepseek.com }"));
    expect(problem).toMatchObject({ line: 8, column: 14 });
    expect(problem!.message).toContain('unknown key "hots"');
  });

  test("a fields entry outside the four carrier names fails, at the entry", () => {
    const [problem] = problemsOf(VALID.replace("fields: [reasoning_content]", "fields: [reasoning_content, thinking]"));
    expect(problem).toMatchObject({ line: 9, column: 33 });
    expect(problem!.message).toBe('carriers.0.fields.1: must be one of "reasoning_content", "reasoning", "reasoning_details", "extra_content"');
  });

  test("a repeated fields entry fails", () => {
    expect(problemsOf(VALID.replace("fields: [reasoning_content]", "fields: [reasoning, reasoning]"))[0]!.message).toMatch(/duplicate/);
  });

  test("a wrongly typed value names the type it must have", () => {
    const [problem] = problemsOf(VALID.replace("must_echo: true", 'must_echo: "yes"'));
    expect(problem).toMatchObject({ line: 10, column: 16 });
    expect(problem!.message).toBe("carriers.0.must_echo: must be boolean");
  });

  test("a carrier route without fields says which key is missing", () => {
    const [problem] = problemsOf(VALID.replace("    fields: [reasoning_content]\n", ""));
    expect(problem!.line).toBe(8);
    expect(problem!.message).toBe('carriers.0: missing required key "fields"');
  });

  test("a provider naming a plugin that is not loaded is a clear problem at the plugin name", () => {
    const [problem] = problemsOf(VALID.replace("demo: { plugin: demo }", "demo: { plugin: demoo }"));
    expect(formatProblem(problem!)).toBe('routes.yaml:3:19: provider "demo" names plugin "demoo", which is not loaded (loaded: demo, openai-compatible)');
  });

  test("a model naming an undefined provider is a problem at the reference", () => {
    const [problem] = problemsOf(VALID.replace("{ name: demo, provider: demo }", "{ name: demo, provider: dmeo }"));
    expect(formatProblem(problem!)).toBe('routes.yaml:6:29: model "demo" names provider "dmeo", which routes.yaml does not define');
  });

  test("a YAML syntax error is reported where the parser stopped", () => {
    const [problem] = problemsOf("version: 1\nproviders:\n  demo: { plugin: demo\nmodels: []\n");
    expect(problem!.line).toBeGreaterThanOrEqual(3);
    expect(problem!.message.length).toBeGreaterThan(0);
  });

  test("a key given twice is an error, not a silent override", () => {
    expect(problemsOf(VALID.replace("  demo: { plugin: demo }\n", "  demo: { plugin: demo }\n  demo: { plugin: demo }\n"))[0]!.line).toBe(4);
  });

  test("several problems are all reported, each once", () => {
    const problems = problemsOf(VALID.replace("version: 1", "version: 2").replace("must_echo: true", "must_echo: 1"));
    expect(problems.map((problem) => problem.line)).toEqual([1, 10]);
  });

  test("a base_url that is not http(s) is rejected", () => {
    expect(problemsOf(VALID.replace("https://api.deepseek.com/v1", "ftp://api.deepseek.com"))[0]!.message).toMatch(
      /^providers\.deepseek\.base_url: must match pattern/,
    );
  });
});

describe("host matching", () => {
  test.each([
    ["mistral.ai", "mistral.ai", true],
    ["api.mistral.ai", "mistral.ai", true],
    ["a.b.mistral.ai", "mistral.ai", true],
    ["API.Mistral.AI", "mistral.ai", true],
    ["mistral.ai.evil.io", "mistral.ai", false],
    ["evilmistral.ai", "mistral.ai", false],
    ["mistral.ai", "api.mistral.ai", false],
  ])("%s against %s → %s", (host, pattern, expected) => {
    expect(hostMatches(host, pattern)).toBe(expected);
  });

  test.each([
    ["localhost", true],
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["10.1.2.3", true],
    ["172.16.0.5", true],
    ["172.31.255.255", true],
    ["192.168.1.20", true],
    ["169.254.1.1", true],
    ["::1", true],
    ["fd12:3456::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["gpu-box.local", true],
    ["172.32.0.1", false],
    ["8.8.8.8", false],
    ["::ffff:8.8.8.8", false],
    ["api.deepseek.com", false],
    ["localhost.evil.com", false],
    ["", false],
  ])("isLocalHost(%j) → %s", (host, expected) => {
    expect(isLocalHost(host)).toBe(expected);
  });

  test.each([
    ["127.0.0.1", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.5", false],
    ["10.0.0.2", false],
  ])("isLoopbackHost(%j) → %s (a bind address that is not loopback gets a warning)", (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  test("hostOf drops port, brackets and case", () => {
    expect(hostOf("http://LocalHost:11434/v1")).toBe("localhost");
    expect(hostOf("http://[::1]:8000/v1")).toBe("::1");
    expect(hostOf("http://[::ffff:127.0.0.1]:8000")).toBe("::ffff:7f00:1");
    expect(hostOf(undefined)).toBe("");
  });
});

describe("the shipped routes.yaml", () => {
  const table = tableOf(readFileSync(SHIPPED, "utf8"), SHIPPED_PLUGINS);
  const provider = (id: string): ProviderConfig => table.providers.get(id)!;
  const withHost = (host: string): ProviderConfig => ({ ...provider("deepseek"), id: "custom", host });

  test("serves the demo and labels it a simulation", () => {
    expect(table.resolveModel("demo")).toMatchObject({ upstreamModel: "demo-reasoner", provider: { plugin: "demo" } });
    expect(table.models.find((model) => model.name === "demo")!.description).toMatch(/SIMULATION/);
  });

  test("a glob model passes the starred part on as the upstream model", () => {
    expect(table.resolveModel("openrouter/anthropic/claude-sonnet-4.5")).toMatchObject({
      upstreamModel: "anthropic/claude-sonnet-4.5",
      provider: { id: "openrouter" },
    });
    expect(table.resolveModel("mistral/magistral-medium-latest")?.upstreamModel).toBe("magistral-medium-latest");
    expect(table.resolveModel("openrouter")).toBeUndefined();
    expect(table.resolveModel("gpt-unknown")).toBeUndefined();
  });

  test("DeepSeek gets reasoning_content and must_echo", () => {
    const resolved = table.resolveModel("deepseek-reasoner")!;
    expect(table.policyFor(resolved.provider, resolved.upstreamModel)).toMatchObject({ fields: ["reasoning_content"], mustEcho: true });
  });

  test("strict-schema hosts and their subdomains get nothing; a look-alike domain does not", () => {
    expect(table.policyFor(provider("mistral"), "magistral-medium").fields).toEqual([]);
    expect(table.policyFor(withHost("eu.api.mistral.ai"), "x").fields).toEqual([]);
    expect(table.policyFor(withHost("mistral.ai.evil.io"), "x").fields).toEqual(["reasoning_content"]);
  });

  test("OpenRouter reads all three carriers", () => {
    expect(table.policyFor(provider("openrouter"), "anthropic/claude-sonnet-4.5").fields).toEqual(["reasoning_content", "reasoning", "reasoning_details"]);
  });

  test("GLM gets its keep-thinking request_extra", () => {
    expect(table.policyFor(provider("zai"), "glm-4.6").requestExtra).toEqual({ thinking: { type: "enabled", clear_thinking: false } });
  });

  test("a model glob in match narrows a route (DashScope qwen3.6+ only)", () => {
    const dashscope = withHost("dashscope-intl.aliyuncs.com");
    expect(table.policyFor(dashscope, "qwen3.6-plus").requestExtra).toEqual({ preserve_thinking: true });
    expect(table.policyFor(dashscope, "qwen3-max").requestExtra).toBeUndefined();
  });

  test("local servers read both plain-text names", () => {
    expect(table.policyFor(provider("ollama"), "qwen3:8b").fields).toEqual(["reasoning_content", "reasoning"]);
    expect(table.policyFor(withHost("192.168.1.50"), "any").fields).toEqual(["reasoning_content", "reasoning"]);
  });

  test("first match wins", () => {
    const table2 = tableOf(`${VALID}  - match: { provider: deepseek }\n    fields: [reasoning]\n`);
    expect(table2.policyFor(table2.providers.get("deepseek")!, "deepseek-reasoner")).toMatchObject({ fields: ["reasoning_content"], routeIndex: 0 });
  });

  test("every carrier route carries a comment saying why it exists", () => {
    const carriers = parseDocument(readFileSync(SHIPPED, "utf8")).get("carriers", true);
    if (!isSeq(carriers)) throw new Error("carriers is not a list");
    carriers.items.forEach((route, index) => {
      const comment =
        (route as { commentBefore?: string | null }).commentBefore ?? (index === 0 ? (carriers as { commentBefore?: string | null }).commentBefore : undefined);
      expect(comment?.trim().length, `carriers[${index}] has no comment`).toBeGreaterThan(10);
    });
  });

  test("the table is immutable", () => {
    expect(() => (table.models as { name: string }[]).push({ name: "x" })).toThrow();
    expect(Object.isFrozen(table.carriers[0]!.fields)).toBe(true);
  });
});
