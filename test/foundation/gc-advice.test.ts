import { expect, test } from "vitest";
import { gcAdvice, usableCpus } from "../../src/gateway/gc-advice.js";

test("usable CPUs: the affinity, lowered by a cgroup v2 quota (cpu.max) when one is set", () => {
  const quota = (text: string) => () => text;
  const noFile = () => {
    throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
  };
  expect(usableCpus(4, noFile)).toBe(4);
  expect(usableCpus(4, quota("max 100000\n"))).toBe(4);
  expect(usableCpus(4, quota("100000 100000\n"))).toBe(1); // docker --cpus=1
  expect(usableCpus(4, quota("50000 100000\n"))).toBe(1); // half a CPU is still one to run on
  expect(usableCpus(4, quota("150000 100000\n"))).toBe(2);
  expect(usableCpus(1, quota("400000 100000\n"))).toBe(1); // pinned to one core, whatever the quota
  expect(usableCpus(2, quota("garbage"))).toBe(2);
});

test("the advice is for one CPU, and not when node runs with the flag already", () => {
  expect(gcAdvice(1, [], "/opt/carrierd/bin/carrierd")).toBe(
    "one CPU available: start the gateway as `node --single-threaded-gc /opt/carrierd/bin/carrierd gateway` for shorter tail latency (docs/operators.md)",
  );
  expect(gcAdvice(1, ["--enable-source-maps"], "bin/carrierd")).toMatch(/single-threaded-gc/);
  expect(gcAdvice(2, [], "bin/carrierd")).toBeUndefined();
  expect(gcAdvice(1, ["--single-threaded-gc"], "bin/carrierd")).toBeUndefined();
  expect(gcAdvice(1, ["--max-old-space-size=512", "--single_threaded_gc"], "bin/carrierd")).toBeUndefined();
});
