import { expect, test } from "vitest";
import { GatewayError } from "../../src/foundation/errors/gateway-error.js";
import { LIST_DEADLINE_MS, ListGate } from "../../src/operations/history/list-gate.js";

/** The bounds on session lists running at once: per key, per gateway, each with its deadline; a list past them is a 429 at once. */
test("one list per key and two per gateway run at once; the next is history_busy with Retry-After, and a finished list frees its place", async () => {
  const gate = new ListGate(1, 2);
  const held: (() => void)[] = [];
  const deadlines: number[] = [];
  const hold = (deadline: number) => {
    deadlines.push(deadline);
    return new Promise<void>((resolve) => held.push(resolve));
  };
  const before = Date.now();
  const a = gate.run("key-a", hold);
  const refusedSameKey = await gate.run("key-a", hold).catch((error: unknown) => error);
  expect(refusedSameKey).toBeInstanceOf(GatewayError);
  expect(refusedSameKey).toMatchObject({ code: "history_busy", status: 429, headers: { "retry-after": "1" } });
  const b = gate.run("key-b", hold);
  await expect(gate.run("key-c", hold)).rejects.toMatchObject({ code: "history_busy", message: expect.stringContaining("gateway") });
  expect(deadlines).toHaveLength(2);
  for (const deadline of deadlines) expect(deadline - before).toBeGreaterThanOrEqual(LIST_DEADLINE_MS);
  held[0]!();
  await a;
  const c = gate.run("key-c", hold);
  held[1]!();
  held[2]!();
  await Promise.all([b, c]);
  // a list that failed frees its place too
  await expect(gate.run("key-a", () => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
  await expect(gate.run("key-a", async () => "listed")).resolves.toBe("listed");
});
