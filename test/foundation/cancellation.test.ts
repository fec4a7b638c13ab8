import { expect, test } from "vitest";
import type { UpstreamCall } from "../../src/providers/contract.js";
import { Cancellation, cancellationOf, withCancellation } from "../../src/providers/upstream/cancellation.js";

test("a cancellation tells its watchers once, and its AbortSignal exists only once read", () => {
  const cancellation = new Cancellation();
  const seen: string[] = [];
  const stop = cancellation.onCancel(() => seen.push("stopped watcher"));
  cancellation.onCancel(() => seen.push("watcher"));
  stop();
  const early = cancellation.signal;
  expect(early.aborted).toBe(false);
  cancellation.cancel();
  cancellation.cancel();
  expect(seen).toEqual(["watcher"]);
  expect(early.aborted).toBe(true);
  expect(cancellation.signal).toBe(early);
  cancellation.onCancel(() => seen.push("late watcher")); // already cancelled: told at once
  expect(seen).toEqual(["watcher", "late watcher"]);
});

test("a signal first read after the client left is already aborted; a cancellation of a signal follows it", async () => {
  const gone = new Cancellation();
  gone.cancel();
  expect(gone.signal.aborted).toBe(true);
  const controller = new AbortController();
  const followed = Cancellation.of(controller.signal);
  expect(followed.cancelled).toBe(false);
  controller.abort();
  expect(followed.cancelled).toBe(true);
  const timedOut = Cancellation.of(AbortSignal.timeout(5));
  await new Promise((resolve) => timedOut.onCancel(() => resolve(undefined)));
  expect(timedOut.cancelled).toBe(true);
});

test("a call built by the core has its own lazy signal: one getter for every call, copied by a spread, aborted with the client", () => {
  const first = new Cancellation();
  const second = new Cancellation();
  const base = { provider: { id: "p" }, model: "m", stream: true };
  const one = withCancellation({ ...base } as unknown as Omit<UpstreamCall, "signal">, first);
  const two = withCancellation({ ...base } as unknown as Omit<UpstreamCall, "signal">, second);
  expect(Object.keys(one)).toContain("signal");
  // the same accessor on both: no closure (and no hidden class of its own) per call
  expect(Object.getOwnPropertyDescriptor(one, "signal")!.get).toBe(Object.getOwnPropertyDescriptor(two, "signal")!.get);
  expect(cancellationOf(one)).toBe(first);
  const copy = { ...one, model: "other" };
  expect(copy.signal).toBe(one.signal);
  first.cancel();
  expect(copy.signal.aborted).toBe(true);
  expect(two.signal.aborted).toBe(false);
  // a call a plugin made itself is followed through its signal
  expect(cancellationOf(copy).cancelled).toBe(true);
});
