import { expect, test } from "vitest";
import { Cancellation } from "../../src/upstream/cancellation.js";

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
