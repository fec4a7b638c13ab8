import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { codexConfig, DEFAULT_BASE_URL, KEY_VARIABLE, opencodeConfig, pinnedVersion, piModels } from "../support/agent-configs.js";

/** README's "Agent CLIs" shows, for carrierd's default address, exactly the files the agent CLI tests write, and the versions they run. */
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## Agent CLIs"), readme.indexOf("\n## ", readme.indexOf("## Agent CLIs") + 1));

test.each([
  ["@openai/codex", "~/.codex/config.toml", codexConfig(DEFAULT_BASE_URL)],
  ["opencode-ai", "~/.config/opencode/opencode.json", opencodeConfig(DEFAULT_BASE_URL)],
  ["@mariozechner/pi-coding-agent", "~/.pi/agent/models.json", piModels(DEFAULT_BASE_URL)],
])("%s: README shows the tested %s and the pinned version", (name, path, config) => {
  expect(section).toContain(`\`${path}\`:\n\n\`\`\``);
  expect(section).toContain(`\n${config}\`\`\`\n`);
  expect(section).toContain(`\`${name}\` ${pinnedVersion(name)}`);
});

test("README says where the clients' key comes from", () => {
  expect(section).toContain(`export ${KEY_VARIABLE}="$(cat ~/.carrierd/api_key)"`);
});
