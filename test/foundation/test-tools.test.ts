import { existsSync, readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { agentCli, AGENT_CLI_NAMES, AGENT_CLIS, pinnedVersion, type AgentCliName } from "../support/agent-clients.js";
import { ensureChromium } from "../support/browser.js";
import { saveEnv } from "../support/saved-env.js";

/**
 * What the suite gets for itself beyond `npm install`: the agent clients
 * pinned under test/agents/ and Debian's Chromium for the browser tests.
 */

test("every pinned agent client's folder pins its package at the version its name says, with a lock npm ci installs from", () => {
  for (const name of AGENT_CLI_NAMES) {
    const folder = new URL(`../agents/${name}/`, import.meta.url);
    expect(name.endsWith(`-${pinnedVersion(name)}`), name).toBe(true);
    const lock = JSON.parse(readFileSync(new URL("package-lock.json", folder), "utf8")) as { packages: Record<string, { version?: string }> };
    expect(lock.packages[`node_modules/${AGENT_CLIS[name].package}`]?.version, name).toBe(pinnedVersion(name));
  }
});

test("the package.json of the repository installs none of the agent clients", () => {
  const manifest = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  for (const { package: name } of Object.values(AGENT_CLIS)) expect(manifest).not.toContain(`"${name}"`);
});

test("a client that is not pinned is an error that lists those that are", async () => {
  await expect(agentCli("claude-code-9.9.9" as AgentCliName)).rejects.toThrow(
    /no pinned agent client claude-code-9\.9\.9 \(test\/agents\/ has claude-code-2\.1\.328, /,
  );
});

test(
  "with no Chromium where the tests look, the browser tests' setup installs Debian's chromium when it may, and says what to do when that does not help",
  { timeout: 600_000 },
  async () => {
    const missing = "/nonexistent/carrierd-test/chromium";
    expect(existsSync(missing)).toBe(false);
    const restoreEnv = saveEnv();
    process.env.CARRIERD_CHROMIUM = missing;
    try {
      // as root with apt-get, the setup runs apt-get install chromium (a no-op where it is installed), then looks again
      const error = await ensureChromium().then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(error?.message).toMatch(new RegExp(`^Chromium not found at ${missing}`));
      expect(error?.message).toContain("set CARRIERD_CHROMIUM to a Chromium binary, or set CARRIERD_SKIP_BROWSER=1 to skip the browser tests");
      if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) expect(error?.message).toContain("even after apt-get installed Debian's chromium");
    } finally {
      // a CARRIERD_CHROMIUM the run was started with stays for the files after this one in the worker
      restoreEnv();
    }
  },
);
