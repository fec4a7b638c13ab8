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
  await expect(gate.run("key-d", () => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
  await new Promise((resolve) => setTimeout(resolve, 5));
  await expect(gate.run("key-d", async () => "listed")).resolves.toBe("listed");
});

test("a key spends what its lists take from a credit that refills at half speed: run dry, it is history_busy; refilled, it is answered", async () => {
  const gate = new ListGate(1, 2, 30);
  const slow = () => new Promise<string>((resolve) => setTimeout(() => resolve("listed"), 80));
  // quick lists one after another never run the credit dry
  for (let i = 0; i < 20; i++) await expect(gate.run("key-a", async () => "listed")).resolves.toBe("listed");
  const started = Date.now();
  await gate.run("key-a", slow);
  const took = Date.now() - started;
  await expect(gate.run("key-a", slow)).rejects.toMatchObject({ code: "history_busy", headers: { "retry-after": "1" } });
  // another key is not held back by key-a's
  await expect(gate.run("key-b", async () => "listed")).resolves.toBe("listed");
  // in debt by about took - 30 ms (a full credit earns nothing more while it is spent), earned back at half speed
  await new Promise((resolve) => setTimeout(resolve, 2 * took + 20));
  await expect(gate.run("key-a", async () => "listed")).resolves.toBe("listed");
});
