import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { isRunning, track } from "../support/child-processes.js";
import { REPO } from "./cli-process.js";

test("a run whose hook times out, and one whose worker dies, leave no process behind: gateways, children and grandchildren are killed by process group", async () => {
  const dir = mkdtempSync(join(tmpdir(), "carrierd-leftovers-"));
  const pidsFile = join(dir, "pids");
  writeFileSync(pidsFile, "");
  try {
    const vitest = join(REPO, "node_modules", "vitest", "vitest.mjs");
    const run = await new Promise<{ code: number; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [vitest, "run", "--config", "test/foundation/fixtures/leftovers/vitest.config.ts"],
        { cwd: REPO, env: { ...process.env, LEFTOVER_PIDS_FILE: pidsFile, NO_COLOR: "1" }, timeout: 90_000, detached: true },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: stdout + stderr }),
      );
      track(child);
    });
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(/Hook timed out/);
    expect(run.output).toMatch(/killed \d+ process\(es\) the tests left running/);
    const pids = readFileSync(pidsFile, "utf8").split("\n").filter(Boolean).map(Number);
    expect(pids).toHaveLength(5); // a gateway, and twice a process with its grandchild
    expect(pids.filter(isRunning)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
