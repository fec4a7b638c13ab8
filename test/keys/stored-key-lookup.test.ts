import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { newDataScope, newSecret, secretHash } from "../../src/http/keys/secret.js";
import { StoredKeyLookup } from "../../src/http/keys/stored-key-lookup.js";
import { openStorage } from "../../src/storage/open/open-storage.js";
import type { KeyQuery } from "../../src/storage/keys.js";
import type { Storage } from "../../src/storage/storage.js";
import { waitFor } from "../support/wait-for.js";

/** The negative cache's two bounds and the one-read-at-a-time rule, over a real state.db. */
let home: string;
let storage: Storage;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "carrierd-key-lookup-"));
  storage = await openStorage(undefined, { home });
});
afterAll(async () => {
  await storage?.close();
  rmSync(home, { recursive: true, force: true });
});

const wrongHashes = (count: number) => Array.from({ length: count }, () => secretHash(newSecret()));

test("the remembered unknown hashes never exceed their number; the oldest is asked for again", async () => {
  const reads = vi.spyOn(storage.keys, "list");
  try {
    const lookup = new StoredKeyLookup(storage.keys, (error) => expect.fail(String(error)), { negativeEntries: 8 });
    const hashes = wrongHashes(20);
    for (const hash of hashes) expect(await lookup.find(hash)).toBeUndefined();
    expect(lookup.remembered).toBe(8);
    expect(reads.mock.calls.length).toBe(20);
    // the last eight are remembered: no read; the first was forgotten: one read
    for (const hash of hashes.slice(-8)) await lookup.find(hash);
    expect(reads.mock.calls.length).toBe(20);
    await lookup.find(hashes[0]!);
    expect(reads.mock.calls.length).toBe(21);
  } finally {
    reads.mockRestore();
  }
});

test("a remembered unknown hash is asked for again once its time is up", async () => {
  const reads = vi.spyOn(storage.keys, "list");
  try {
    const lookup = new StoredKeyLookup(storage.keys, (error) => expect.fail(String(error)), { negativeTtlMs: 40 });
    const [hash] = wrongHashes(1);
    const askedAt = Date.now();
    await lookup.find(hash!);
    await lookup.find(hash!);
    expect(reads.mock.calls.length).toBe(1);
    // asked again as soon as its 40 ms are up, and not before
    await waitFor(async () => (await lookup.find(hash!), reads.mock.calls.length === 2), { intervalMs: 5, what: "a second read of the hash" });
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(40);
    expect(reads.mock.calls.length).toBe(2);
  } finally {
    reads.mockRestore();
  }
});

test("reads never overlap: hashes asked for meanwhile go in the next read, in batches; past the queue a key is refused unread", async () => {
  const secret = newSecret();
  await storage.keys.update({
    create: {
      name: "present",
      secretHash: secretHash(secret),
      dataScope: newDataScope(),
      scopes: ["chat"],
      models: [],
      eventsOf: [],
      createdAt: Date.now(),
      expiresAt: null,
    },
  });
  let running = 0;
  let most = 0;
  const batches: number[] = [];
  const slowStore = {
    async list(query?: KeyQuery) {
      running++;
      most = Math.max(most, running);
      batches.push(query?.secretHashes?.length ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
      return storage.keys.list(query);
    },
  };
  const lookup = new StoredKeyLookup(slowStore, (error) => expect.fail(String(error)), { batch: 50, queue: 100 });
  const hashes = wrongHashes(150);
  const answers = await Promise.all([lookup.find(secretHash(secret)), ...hashes.map((hash) => lookup.find(hash))]);
  expect(answers[0]?.name).toBe("present");
  expect(answers.slice(1).every((answer) => answer === undefined)).toBe(true);
  expect(most).toBe(1);
  // the first read took the present key alone; 100 waited behind it (two reads of 50); the other 50 were refused unread
  expect(batches).toEqual([1, 50, 50]);
});

test("a store that does not answer: the key is refused, not remembered, and asked for again", async () => {
  let fail = true;
  const errors: unknown[] = [];
  const flaky = {
    list: (query?: KeyQuery) => (fail ? Promise.reject(new Error("store down")) : storage.keys.list(query)),
  };
  const lookup = new StoredKeyLookup(flaky, (error) => errors.push(error));
  const secret = newSecret();
  expect(await lookup.find(secretHash(secret))).toBeUndefined();
  expect(errors).toHaveLength(1);
  expect(lookup.remembered).toBe(0);
  await storage.keys.update({
    create: {
      name: "after-outage",
      secretHash: secretHash(secret),
      dataScope: newDataScope(),
      scopes: ["chat"],
      models: [],
      eventsOf: [],
      createdAt: Date.now(),
      expiresAt: null,
    },
  });
  fail = false;
  expect((await lookup.find(secretHash(secret)))?.name).toBe("after-outage");
});
