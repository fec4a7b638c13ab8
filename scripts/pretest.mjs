#!/usr/bin/env node
// The checks `npm test` runs first — the build the tests spawn (dist/), formatting and lint — run side by side:
// each is one single-threaded process, so on two cores this takes as long as the slowest (eslint), not the sum.
// Each one's output is printed whole when it ends; the run fails if any failed.
import { spawn } from "node:child_process";

const CHECKS = [
  ["build", "tsc", ["-p", "tsconfig.json"]],
  ["formatting", "prettier", ["--check", "--log-level", "warn", "."]],
  ["lint", "eslint", ["."]],
];

const results = await Promise.all(
  CHECKS.map(
    ([name, command, args]) =>
      new Promise((resolve) => {
        const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (chunk) => (output += chunk));
        child.stderr.on("data", (chunk) => (output += chunk));
        child.on("error", (error) => {
          process.stdout.write(`${output}${error.message}\n`);
          resolve({ name, code: 1 });
        });
        child.on("close", (code) => {
          if (output) process.stdout.write(output);
          resolve({ name, code: code ?? 1 });
        });
      }),
  ),
);

const failed = results.filter((result) => result.code !== 0);
for (const { name, code } of failed) process.stderr.write(`pretest: ${name} failed (exit ${code})\n`);
process.exit(failed.length > 0 ? 1 : 0);
