import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { agentCli, AGENT_CLI_NAMES, type AgentCliName } from "./agent-clients.js";
import { ensureChromium, SKIP_BROWSER } from "./browser.js";
import { selectedTestFiles } from "./selected-test-files.js";

/**
 * Gets, before any test starts, what the selected test files need beyond
 * `npm install`: the pinned agent clients they name (by their folder name
 * under test/agents/, as they pass it to agentCli), and Chromium for the
 * browser tests (`*.browser.test.ts`). An install never counts against a
 * test's time limit, and a run that selects none of those tests installs
 * nothing. A failed install fails only the tests that need it: they try
 * again, and their error says why.
 */
export default async function setup(project: TestProject): Promise<void> {
  const files = await selectedTestFiles(project);
  const clients = new Set<AgentCliName>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const name of AGENT_CLI_NAMES) if (text.includes(`"${name}"`)) clients.add(name);
  }
  for (const name of clients) await agentCli(name).catch(report);
  if (!SKIP_BROWSER && files.some((file) => file.endsWith(".browser.test.ts"))) await ensureChromium().catch(report);
}

function report(error: Error): void {
  console.error(`global setup: ${error.message}`);
}
