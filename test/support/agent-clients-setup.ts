import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { agentCli, AGENT_CLI_NAMES, type AgentCliName } from "./agent-clients.js";

/**
 * Installs, before any test starts, the pinned agent clients that the
 * selected test files name (by their folder name under test/agents/, as they
 * pass it to agentCli), one after another: an install never counts against a
 * test's time limit, and a run that selects no client test installs none.
 */
export default async function setup(project: TestProject): Promise<void> {
  // the file filters of the command line (`vitest run test/clients`); none: every test file
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const { testFiles } = await project.globTestFiles(filters);
  const wanted = new Set<AgentCliName>();
  for (const file of testFiles) {
    const text = readFileSync(file, "utf8");
    for (const name of AGENT_CLI_NAMES) if (text.includes(`"${name}"`)) wanted.add(name);
  }
  for (const name of wanted) {
    // a failed install fails only the tests that run that client (agentCli tries again there, and its error says why)
    await agentCli(name).catch((error: Error) => console.error(`global setup: ${error.message}`));
  }
}
