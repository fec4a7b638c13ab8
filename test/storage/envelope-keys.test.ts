import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { EnvelopeKeyRing } from "../../src/routing/carriers/envelope-keys.js";
import { Envelopes, type SealedCarriers } from "../../src/routing/carriers/envelope.js";
import type { EnvelopeKey } from "../../src/storage/envelope-keys.js";
import type { EnvelopeKeyStorage, Storage } from "../../src/storage/storage.js";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

/**
 * The envelope keys in the store, on both backends: two processes that
 * create the first key (or rotate) at the same moment agree on one; a
 * rotation made elsewhere is learned when an envelope names the new key;
 * an old key opens until an envelope's lifetime after it was replaced.
 */

const disposals: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const dispose of disposals.splice(0).reverse()) await dispose();
});

/** Two connections to one new store, as two gateways have. */
type TwoOpen = () => Promise<[Storage, Storage]>;

const sqlite: TwoOpen = async () => {
  const home = mkdtempSync(join(tmpdir(), "carrierd-envelope-keys-"));
  const first = openSqliteStorage({ home });
  const second = openSqliteStorage({ home });
  disposals.push(async () => {
    await first.close();
    await second.close();
    rmSync(home, { recursive: true, force: true });
  });
  return [first, second];
};

const postgres: TwoOpen = async () => {
  const schema = await freshSchema();
  const first = await openPostgresStorage({ url: schema.url, poolSize: 2 });
  const second = await openPostgresStorage({ url: schema.url, poolSize: 2 });
  disposals.push(async () => {
    await first.close();
    await second.close();
    await schema.drop();
  });
  return [first, second];
};

const CARRIERS: SealedCarriers = {
  id: "turn_1",
  sessionId: "sess_1",
  plugin: "openai-compatible",
  provider: "deepseek",
  upstreamModel: "deepseek-reasoner",
  reasoningText: "Let me think.",
  reasoningDetails: undefined,
  nativeRecord: undefined,
};

function key(generation: number, id: string, createdAt = 1_000): EnvelopeKey {
  return { generation, id, secret: Buffer.alloc(32, generation), createdAt };
}

announceSkipped("test/storage/envelope-keys.test.ts", 4);
describe.each([
  ["sqlite", sqlite, false],
  ["postgres", postgres, pgSkipReason() !== undefined],
] as const)("%s", (_name, open, skip) => {
  test.skipIf(skip)("a generation is written once: the second writer of it gets the first one's key, bytes intact", async () => {
    const [a, b] = await open();
    const first = await a.envelopeKeys.ensure(key(1, "00112233aabbccdd"));
    const second = await b.envelopeKeys.ensure({ ...key(1, "ffeeddccbbaa9988"), secret: Buffer.alloc(32, 7) });
    expect(second).toEqual(first);
    expect(second).toEqual([{ generation: 1, id: "00112233aabbccdd", secret: Buffer.alloc(32, 1), createdAt: 1_000 }]);
  });

  test.skipIf(skip)("two instances sealing their first envelope at the same moment agree on one key", async () => {
    const [a, b] = await open();
    const [keyA, keyB] = await Promise.all([new EnvelopeKeyRing(a.envelopeKeys).sealing(), new EnvelopeKeyRing(b.envelopeKeys).sealing()]);
    expect(keyA.id).toBe(keyB.id);
    expect(await a.envelopeKeys.ensure()).toHaveLength(1);
  });

  test.skipIf(skip)("a rotation on one instance: the other opens the new key's envelopes at once, and keeps opening the old key's", async () => {
    const [a, b] = await open();
    const ringA = new EnvelopeKeyRing(a.envelopeKeys);
    const ringB = new EnvelopeKeyRing(b.envelopeKeys);
    const before = await new Envelopes(ringA).seal(CARRIERS, "scope");
    expect(await new Envelopes(ringB).open(before, "scope")).toEqual(CARRIERS);
    const rotated = await ringA.rotate();
    expect(rotated.generation).toBe(2);
    const after = await new Envelopes(ringA).seal(CARRIERS, "scope");
    expect(after.slice(0, 12)).not.toBe(before.slice(0, 12));
    expect(await new Envelopes(ringB).open(after, "scope")).toEqual(CARRIERS);
    expect(await new Envelopes(ringB).open(before, "scope")).toEqual(CARRIERS);
    expect((await ringB.sealing()).id).toBe(rotated.id);
  });

  test.skipIf(skip)("two rotations at the same moment add one generation", async () => {
    const [a, b] = await open();
    await new EnvelopeKeyRing(a.envelopeKeys).sealing();
    // "the same moment": both instances have read generation 1 before either writes generation 2
    let arrived = 0;
    let release!: () => void;
    const bothRead = new Promise<void>((resolve) => (release = resolve));
    const readTogether = (store: EnvelopeKeyStorage): EnvelopeKeyStorage => ({
      ensure: async (candidate) => {
        if (candidate) return store.ensure(candidate);
        const keys = await store.ensure();
        if (++arrived === 2) release();
        await bothRead;
        return keys;
      },
    });
    const [one, two] = await Promise.all([
      new EnvelopeKeyRing(readTogether(a.envelopeKeys)).rotate(),
      new EnvelopeKeyRing(readTogether(b.envelopeKeys)).rotate(),
    ]);
    expect(one.id).toBe(two.id);
    expect((await a.envelopeKeys.ensure()).map((stored) => stored.generation)).toEqual([1, 2]);
  });
});

describe("the key ring (in memory, over a SQLite store)", () => {
  test("a replaced key opens for an envelope's lifetime after its replacement, then no more", async () => {
    const [store] = await sqlite();
    let now = 1_000_000;
    const lifetimeMs = 10_000;
    const ring = new EnvelopeKeyRing(store.envelopeKeys, { now: () => now, lifetimeMs });
    const old = await ring.sealing();
    now += 5_000;
    await ring.rotate();
    now += lifetimeMs - 1;
    expect(await ring.opening(old.id)).toBeDefined();
    now += 1;
    expect(await ring.opening(old.id)).toBeUndefined();
  });

  test("envelopes naming unknown keys read the store at most once a second", async () => {
    const [store] = await sqlite();
    let reads = 0;
    const counted = { ensure: (candidate?: EnvelopeKey) => (candidate ? store.envelopeKeys.ensure(candidate) : (reads++, store.envelopeKeys.ensure())) };
    let now = 0;
    const ring = new EnvelopeKeyRing(counted, { now: () => now });
    await ring.sealing();
    const before = reads;
    for (let index = 0; index < 100; index++) expect(await ring.opening(index.toString(16).padStart(16, "0"))).toBeUndefined();
    expect(reads - before).toBe(1);
    now += 1_000;
    await ring.opening("ffffffffffffffff");
    expect(reads - before).toBe(2);
  });

  test("the sealing key is re-read in the background once older than the refresh interval: no seal waits for the store", async () => {
    const [store, other] = await sqlite();
    let now = 0;
    const ring = new EnvelopeKeyRing(store.envelopeKeys, { now: () => now, refreshMs: 60_000 });
    const first = await ring.sealing();
    const rotated = await new EnvelopeKeyRing(other.envelopeKeys).rotate();
    expect((await ring.sealing()).id).toBe(first.id);
    now += 60_001;
    expect((await ring.sealing()).id).toBe(first.id); // this seal used what was held; the read went on beside it
    await new Promise((resolve) => setImmediate(resolve));
    expect((await ring.sealing()).id).toBe(rotated.id);
  });
});
