import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { chromium, type Browser } from "playwright-core";

/**
 * The browser tests drive Debian's Chromium with playwright-core. A machine
 * without it gets it from the tests themselves: run as root with apt-get at
 * hand, the first test that needs it (or the global setup, before any test
 * starts) installs Debian's `chromium` package; anywhere else the error says
 * what to install. CARRIERD_CHROMIUM names another binary;
 * CARRIERD_SKIP_BROWSER=1 skips the browser tests on purpose (a missing
 * Chromium otherwise fails them, so they never pass unchecked).
 */
export const SKIP_BROWSER = process.env.CARRIERD_SKIP_BROWSER === "1";

const DEFAULT_CHROMIUM = "/usr/bin/chromium";
const APT_GET = "/usr/bin/apt-get";
/** Headless, and nothing of its own on the network: no component updates, sync or background fetches. */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const run = promisify(execFile);

/** Where the tests look for Chromium. */
export function chromiumPath(): string {
  return process.env.CARRIERD_CHROMIUM ?? DEFAULT_CHROMIUM;
}

/** Per path looked at: a worker runs file after file (vitest.config.ts), and a later file may look elsewhere. */
const ensured = new Map<string, Promise<string>>();

/** Chromium's path, installed with apt-get first when it is missing and this process may. */
export function ensureChromium(): Promise<string> {
  const path = chromiumPath();
  let found = ensured.get(path);
  if (!found) {
    found = installIfMissing(path);
    ensured.set(path, found);
    // a failed install is tried again by the next caller
    found.catch(() => ensured.delete(path));
  }
  return found;
}

async function installIfMissing(path: string): Promise<string> {
  if (existsSync(path)) return path;
  const how = `install Debian's chromium (apt-get install -y chromium), set CARRIERD_CHROMIUM to a Chromium binary, or set CARRIERD_SKIP_BROWSER=1 to skip the browser tests`;
  if (process.getuid?.() !== 0 || !existsSync(APT_GET)) throw new Error(`Chromium not found at ${path}: ${how}`);
  try {
    await aptGetInstall();
  } catch (error) {
    throw new Error(
      `Chromium not found at ${path}, and installing Debian's chromium with apt-get failed: ${(error as Error).message.trim().slice(-2000)}\n(${how})`,
    );
  }
  if (!existsSync(path)) throw new Error(`Chromium not found at ${path}, even after apt-get installed Debian's chromium (${how})`);
  return path;
}

/** `apt-get install chromium`, waiting for dpkg's lock if another install holds it; with fresh package lists if the first try fails. */
async function aptGetInstall(): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => run(APT_GET, ["install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600", "chromium"], { env, maxBuffer: 16 << 20 });
  try {
    await install();
  } catch {
    await run(APT_GET, ["update", "-qq", "-o", "DPkg::Lock::Timeout=600"], { env, maxBuffer: 16 << 20 });
    await install();
  }
}

/** Chromium, headless, through playwright-core (installed first if it is missing). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await ensureChromium(), args: CHROMIUM_ARGS });
}
