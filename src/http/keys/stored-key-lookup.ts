import type { StoredKey } from "../../storage/keys.js";
import type { KeyStorage } from "../../storage/storage.js";

/** How long a hash the store did not know is refused without asking it again. */
export const NEGATIVE_TTL_MS = 60_000;
/** How many such hashes are remembered; the oldest is forgotten first. */
export const NEGATIVE_ENTRIES = 10_000;
/** How many hashes one store read asks for. */
export const LOOKUP_BATCH = 256;
/** How many hashes may wait for the next read; beyond that an unknown key is refused without one. */
export const LOOKUP_QUEUE = 4096;

export interface LookupLimits {
  negativeTtlMs?: number;
  negativeEntries?: number;
  batch?: number;
  queue?: number;
}

/** What became of the hashes asked for, by outcome (/metrics: carrierd_key_lookups_total). */
export interface LookupCounts {
  /** Found in the store. */
  found: number;
  /** Asked for and not in the store (then remembered). */
  unknown: number;
  /** Refused without a read: remembered as unknown. */
  remembered: number;
  /** Refused without a read: too many waiting already. */
  unread: number;
  /** The store did not answer. */
  failed: number;
}

interface Waiting {
  readonly promise: Promise<StoredKey | undefined>;
  resolve(key: StoredKey | undefined): void;
}

/**
 * Asks the store for secret hashes the key ring does not hold: a key
 * created a moment ago by another process is found on its first request
 * instead of after the ring's next poll.
 *
 * What a flood of wrong keys can cost the store is bounded twice. A hash
 * the store did not know is remembered (at most `negativeEntries` of them,
 * each for `negativeTtlMs`), so a client retrying a wrong key costs one
 * read per that time. Distinct wrong keys cannot be remembered away, so
 * reads never overlap: hashes arriving while one read runs wait for the
 * next, which asks for up to `batch` of them in one statement; at most
 * `queue` wait, and a key beyond them is refused without a read.
 *
 * A hash is safe to remember as unknown because a secret is 256 random
 * bits the store creates before anyone can present it: it cannot have been
 * presented, and refused, before its key existed.
 */
export class StoredKeyLookup {
  private readonly unknown = new Map<string, number>();
  readonly counts: LookupCounts = { found: 0, unknown: 0, remembered: 0, unread: 0, failed: 0 };
  private waiting = new Map<string, Waiting>();
  private running: Map<string, Waiting> | undefined;
  private readonly negativeTtlMs: number;
  private readonly negativeEntries: number;
  private readonly batch: number;
  private readonly queue: number;

  constructor(
    private readonly keys: Pick<KeyStorage, "list">,
    private readonly onError: (error: unknown) => void,
    limits: LookupLimits = {},
  ) {
    this.negativeTtlMs = limits.negativeTtlMs ?? NEGATIVE_TTL_MS;
    this.negativeEntries = limits.negativeEntries ?? NEGATIVE_ENTRIES;
    this.batch = limits.batch ?? LOOKUP_BATCH;
    this.queue = limits.queue ?? LOOKUP_QUEUE;
  }

  /** The stored key of this secret hash; undefined when the store has none, or is not asked (remembered unknown, queue full, store down). */
  find(secretHash: string, now = Date.now()): Promise<StoredKey | undefined> {
    const refusedAt = this.unknown.get(secretHash);
    if (refusedAt !== undefined) {
      if (now - refusedAt < this.negativeTtlMs) {
        this.counts.remembered++;
        return Promise.resolve(undefined);
      }
      this.unknown.delete(secretHash);
    }
    // the same hash asked for already: its read started after this secret was presented the first time, so it answers this one too
    const pending = this.running?.get(secretHash) ?? this.waiting.get(secretHash);
    if (pending) return pending.promise;
    if (this.waiting.size >= this.queue) {
      this.counts.unread++;
      return Promise.resolve(undefined);
    }
    let resolve!: (key: StoredKey | undefined) => void;
    const promise = new Promise<StoredKey | undefined>((settle) => (resolve = settle));
    this.waiting.set(secretHash, { promise, resolve });
    if (!this.running) void this.readNext();
    return promise;
  }

  /** Hashes remembered as unknown now (for tests and the bound they check). */
  get remembered(): number {
    return this.unknown.size;
  }

  private async readNext(): Promise<void> {
    while (this.waiting.size > 0) {
      const batch = new Map<string, Waiting>();
      for (const [hash, waiting] of this.waiting) {
        if (batch.size === this.batch) break;
        batch.set(hash, waiting);
      }
      for (const hash of batch.keys()) this.waiting.delete(hash);
      this.running = batch;
      let found: StoredKey[] | undefined;
      try {
        found = (await this.keys.list({ secretHashes: [...batch.keys()] })).keys;
      } catch (error) {
        // the store is down: these keys are refused now, and not remembered, so they are asked for again once it answers
        this.onError(error);
      }
      const byHash = new Map(found?.map((key) => [key.secretHash, key]));
      const now = Date.now();
      for (const [hash, waiting] of batch) {
        const key = byHash.get(hash);
        if (!found) this.counts.failed++;
        else if (key) this.counts.found++;
        else {
          this.counts.unknown++;
          this.remember(hash, now);
        }
        waiting.resolve(key);
      }
    }
    this.running = undefined;
  }

  private remember(hash: string, now: number): void {
    if (this.unknown.size >= this.negativeEntries) {
      // a Map iterates in insertion order: the first entry is the oldest
      const oldest = this.unknown.keys().next();
      if (!oldest.done) this.unknown.delete(oldest.value);
    }
    this.unknown.set(hash, now);
  }
}
