import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // tsyringe's @inject is a legacy parameter decorator; no metadata is emitted, so every injection names its token.
  oxc: { decorator: { legacy: true } },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "plugins/**/*.test.ts"],
    testTimeout: 20000,
    hookTimeout: 30000,
    pool: "forks",
    // vitest's default is one file per core but one; on two cores that is one file at a time, yet most of a test's time
    // is spent waiting on a gateway process, a CLI or a socket: two files at once share two cores (test/replay: 537 s → 444 s)
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // each worker process runs file after file with the modules it has loaded (src/, its dependencies, the emulators):
    // isolated, every file started a new process that loaded them all again, half the suite's CPU on two cores.
    // What a file changes beyond its own modules (process.env, a spy, fake timers) it puts back when it ends.
    isolate: false,
    // nothing a test starts outlives the run, whatever fails (test/support/child-processes.ts)
    // and the PostgreSQL suites get a database of their own for the run (test/support/postgres-global-setup.ts);
    // the agent clients and the browser the selected test files need are installed before any test starts (test/support/tools-setup.ts)
    globalSetup: ["test/support/global-setup.ts", "test/support/postgres-global-setup.ts", "test/support/tools-setup.ts"],
    setupFiles: ["test/support/process-cleanup.ts"],
    // a failed run ends with the failed tests' names and first error lines (test/support/failure-summary-reporter.ts)
    reporters: ["default", "./test/support/failure-summary-reporter.ts"],
  },
});
