/**
 * Waiting on what a test means rather than for a fixed time: a condition
 * polled until it holds, with a deadline that fails the test with `what`.
 * A fixed sleep is either too short on a loaded machine or too long on an
 * idle one; a poll returns as soon as the thing happened.
 */
export async function waitFor<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  { timeoutMs = 5_000, intervalMs = 10, what = "the condition" }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Until the wall clock shows a later millisecond: what a stored ISO timestamp can tell apart. */
export async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  await waitFor(() => Date.now() > now, { intervalMs: 1, what: "the clock moving on" });
}

/** `count` turns of the event loop: every callback already queued (timers due now, I/O, immediates) has run. */
export async function turnsOfTheLoop(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}
