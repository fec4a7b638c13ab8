import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, copyFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The real agent clients the suite runs (Claude Code, Codex, opencode, pi,
 * Gemini CLI) are not dependencies of carrierd: each is pinned in a folder of
 * its own under test/agents/<name>/ (a package.json and its lock), and is
 * installed with `npm ci` from that lock, the first time a test asks for it,
 * into a cache outside the repository. `npm install` of a clone stays light;
 * the global setup (tools-setup.ts) installs the clients the selected
 * test files name before any test starts, so no install counts against a
 * test's time limit.
 */

/** Every pinned client: its folder under test/agents/, the npm package, and the command it installs. */
export const AGENT_CLIS = {
  "claude-code-2.1.328": { package: "@anthropic-ai/claude-code", bin: "claude" },
  "claude-code-2.1.337": { package: "@anthropic-ai/claude-code", bin: "claude" },
  "codex-0.171.0": { package: "@openai/codex", bin: "codex" },
  "opencode-1.18.33": { package: "opencode-ai", bin: "opencode" },
  "pi-0.73.1": { package: "@mariozechner/pi-coding-agent", bin: "pi" },
  "gemini-cli-0.61.0": { package: "@google/gemini-cli", bin: "gemini" },
} as const;

export type AgentCliName = keyof typeof AGENT_CLIS;

export const AGENT_CLI_NAMES = Object.keys(AGENT_CLIS) as AgentCliName[];

const AGENTS_DIR = fileURLToPath(new URL("../agents/", import.meta.url));
/** The manifest and lock of a client: what is installed, and what names its cache folder. */
const PINNED_FILES = ["package.json", "package-lock.json"] as const;

/** Where installed clients are kept between runs: CARRIERD_TEST_CACHE, or carrierd-test under the user's cache folder. */
export function testCacheDir(): string {
  return process.env.CARRIERD_TEST_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "carrierd-test");
}

/** The exact version of the client's npm package that its folder pins. */
export function pinnedVersion(name: AgentCliName): string {
  const manifest = JSON.parse(readFileSync(join(AGENTS_DIR, name, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const version = manifest.dependencies[AGENT_CLIS[name].package];
  if (!version) throw new Error(`test/agents/${name}/package.json does not pin ${AGENT_CLIS[name].package}`);
  return version;
}

/** The client's install folder: its name and a digest of its manifest and lock, so a changed pin is a new folder. */
function installDir(name: AgentCliName): string {
  const digest = createHash("sha256");
  for (const file of PINNED_FILES) digest.update(readFileSync(join(AGENTS_DIR, name, file)));
  return join(testCacheDir(), "agents", `${name}-${digest.digest("hex").slice(0, 12)}`);
}

function binPath(dir: string, name: AgentCliName): string {
  return join(dir, "node_modules", ".bin", AGENT_CLIS[name].bin);
}

const installs = new Map<AgentCliName, Promise<string>>();

/**
 * The absolute path of the client's command, installed first if the cache
 * does not have it yet. Safe when several test files (or runs) ask at once:
 * each installs into a folder of its own and renames it into place; the
 * first rename wins and the others use it.
 */
export function agentCli(name: AgentCliName): Promise<string> {
  if (!(name in AGENT_CLIS)) return Promise.reject(new Error(`no pinned agent client ${String(name)} (test/agents/ has ${AGENT_CLI_NAMES.join(", ")})`));
  let install = installs.get(name);
  if (!install) {
    install = installOnce(name);
    installs.set(name, install);
    // a failed install is tried again by the next caller
    install.catch(() => installs.delete(name));
  }
  return install;
}

async function installOnce(name: AgentCliName): Promise<string> {
  const dir = installDir(name);
  const bin = binPath(dir, name);
  if (existsSync(bin)) return bin;
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.installing-`);
  try {
    for (const file of PINNED_FILES) copyFileSync(join(AGENTS_DIR, name, file), join(staging, file));
    await npmCi(staging, name);
    if (!existsSync(binPath(staging, name))) throw new Error(`installing ${name}: npm ci succeeded but node_modules/.bin/${AGENT_CLIS[name].bin} is missing`);
    try {
      renameSync(staging, dir);
    } catch (error) {
      // another run renamed its copy into place first: that one is as good
      if (!existsSync(bin)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return bin;
}

/**
 * npm's settings a script run passes on in the environment that must not
 * reach this install (the repository's prefix, a silenced log level, its
 * package's fields); what says where and how to reach the registry does.
 */
const KEPT_NPM_SETTINGS = new Set(["registry", "cache", "userconfig", "globalconfig", "cafile", "proxy", "https_proxy", "noproxy", "strict_ssl"]);

function installEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if (lower.startsWith("npm_") && !(lower.startsWith("npm_config_") && KEPT_NPM_SETTINGS.has(lower.slice("npm_config_".length)))) continue;
    env[key] = value;
  }
  return env;
}

/** The npm that came with this Node, else the one on PATH. */
function npmCommand(): string {
  const beside = join(dirname(process.execPath), "npm");
  return existsSync(beside) ? beside : "npm";
}

function npmCi(dir: string, name: AgentCliName): Promise<void> {
  const child = spawn(npmCommand(), ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, env: installEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new Error(`installing ${name}: could not run npm (${error.message})`)));
    child.once("close", (code, signal) => {
      if (code === 0) return resolve();
      reject(
        new Error(
          `installing ${name} (test/agents/${name}) with npm ci failed (${code ?? signal}); the tests that run it need the npm registry once, then use the copy in ${dirname(dir)}\n${output.trim().slice(-3000)}`,
        ),
      );
    });
  });
}
