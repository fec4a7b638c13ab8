import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { formatProblem, parseRoutes } from "../../src/routing/routes/load-routes.js";
import { carrierd } from "./cli-process.js";

/** routes.yaml `hosted_tools` (docs/routes.md#hosted_tools): parsed, validated at the offending value, resolved per model, shown by `routes explain`. */
const PLUGINS = new Set(["demo", "openai-compatible"]);
const home = mkdtempSync(join(tmpdir(), "carrierd-hosted-tools-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function table(topLevel: string, models: string) {
  return parseRoutes(`version: 1\n${topLevel}providers:\n  demo: { plugin: demo }\nmodels:\n${models}`, "routes.yaml", { knownPlugins: PLUGINS });
}

test("a model's own hosted_tools wins over the file's, and omit is the shipped default", () => {
  const none = table("", "  - { name: demo, provider: demo }\n");
  expect(none.ok && none.table.resolveModel("demo")?.hostedTools).toBe("omit");
  const fileWide = table("hosted_tools: reject\n", "  - { name: demo, provider: demo }\n  - { name: lenient, provider: demo, hosted_tools: omit }\n");
  expect(fileWide.ok && fileWide.table.resolveModel("demo")?.hostedTools).toBe("reject");
  expect(fileWide.ok && fileWide.table.resolveModel("lenient")?.hostedTools).toBe("omit");
});

test("a hosted_tools value other than omit or reject is a problem at the value", () => {
  const result = table("", "  - { name: demo, provider: demo, hosted_tools: drop }\n");
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.problems.map(formatProblem)).toEqual(['routes.yaml:5:49: models.0.hosted_tools: must be one of "omit", "reject"']);
  const topLevel = table("hosted_tools: maybe\n", "  - { name: demo, provider: demo }\n");
  if (!topLevel.ok) expect(topLevel.problems.map(formatProblem)).toEqual(['routes.yaml:2:15: hosted_tools: must be one of "omit", "reject"']);
  expect(topLevel.ok).toBe(false);
});

test("routes explain shows the rule in force and the hosted tool types the route's plugin hands on", async () => {
  const file = join(home, "routes.yaml");
  writeFileSync(file, "version: 1\nhosted_tools: reject\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: demo, provider: demo }\n");
  const result = await carrierd(["routes", "explain", "--routes", file, "--model", "demo", "--json"]);
  expect(result.code, result.stderr).toBe(0);
  // no shipped plugin runs a hosted tool itself
  expect(JSON.parse(result.stdout)).toMatchObject({ hosted_tools: "reject", hosted_passed: [] });
});
