import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { AGENT_CLIS, pinnedVersion, type AgentCliName } from "../support/agent-clients.js";
import { codexConfig, DEFAULT_BASE_URL, KEY_VARIABLE, opencodeConfig, piModels } from "../support/agent-configs.js";

/** README's "Agent CLIs" shows, for carrierd's default address, exactly the files the agent CLI tests write, and the versions they run. */
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## Agent CLIs"), readme.indexOf("\n## ", readme.indexOf("## Agent CLIs") + 1));

test.each<[AgentCliName, string, string]>([
  ["codex-0.171.0", "~/.codex/config.toml", codexConfig(DEFAULT_BASE_URL)],
  ["opencode-1.18.33", "~/.config/opencode/opencode.json", opencodeConfig(DEFAULT_BASE_URL)],
  ["pi-0.73.1", "~/.pi/agent/models.json", piModels(DEFAULT_BASE_URL)],
])("%s: README shows the tested %s and the pinned version", (cli, path, config) => {
  expect(section).toContain(`\`${path}\`:\n\n\`\`\``);
  expect(section).toContain(`\n${config}\`\`\`\n`);
  expect(section).toContain(`\`${AGENT_CLIS[cli].package}\` ${pinnedVersion(cli)}`);
});

test("README says where the clients' key comes from", () => {
  expect(section).toContain(`export ${KEY_VARIABLE}="$(cat ~/.carrierd/api_key)"`);
});
