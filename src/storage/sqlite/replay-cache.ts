import type { Db } from "./database.js";
import { foreignWrites, type ForeignWrites } from "./foreign-writes.js";
import type { FingerprintMatch, ReplaySource } from "../turns.js";
import { GenerationalCache } from "../../foundation/util/generational-cache.js";

/** At most this many matches are kept per fingerprint, newest first (as the query returns them). */
export const MATCHES_PER_FINGERPRINT = 8;
const MAX_FINGERPRINTS = 50_000;
const MAX_SOURCES = 4_096;
/** A turn whose carriers are larger than this is read from SQLite each time rather than held in memory. */
const MAX_CACHED_SOURCE_CHARS = 256 * 1024;

/**
 * What the replay lookup read from SQLite, kept in memory: fingerprint
 * matches (misses included) and the carriers of recently replayed turns.
 * Stored turns never change, so the only ways to be stale are writes this
 * cache did not see. This process's own turn writes update it; every other
 * write, by this process (`total_changes()` moved past what this cache
 * accounted for) or by another one (see ForeignWrites: a CLI `sessions rm`,
 * a branch), empties it before the next read.
 */
export class ReplayCache {
  /**
   * key hash → fingerprint → matches. Nested rather than keyed by the two
   * joined: a fingerprint comes from the fingerprint memo, the same string
   * every request, so its hash is computed once; a joined key was a new
   * string to build and hash per assistant message per request. Bounded per
   * key (a gateway has one key; a branch keeps its source's).
   */
  private readonly matches = new Map<string, GenerationalCache<string, FingerprintMatch[]>>();
  private readonly sources = new GenerationalCache<string, ReplaySource>(MAX_SOURCES);
  private readonly foreign: ForeignWrites;
  private readonly totalChanges: () => number;
  private changes = -1;
  private version = -1;

  constructor(db: Db) {
    this.foreign = foreignWrites(db);
    const changes = db.prepare("SELECT total_changes()").pluck();
    this.totalChanges = () => changes.get() as number;
    let caches = cachesOf.get(db);
    if (!caches) cachesOf.set(db, (caches = []));
    caches.push(this);
  }

  /** Whether every write through this connection so far is one this cache accounted for. */
  accountedFor(): boolean {
    return this.totalChanges() === this.changes;
  }

  /** Empties the cache when the database changed behind its back; call before reading from it. */
  validate(): void {
    const changes = this.totalChanges();
    const version = this.foreign.epochNow();
    if (changes !== this.changes || version !== this.version) {
      this.empty();
      this.changes = changes;
      this.version = version;
    }
  }

  /**
   * After a write this cache accounted for itself, so it does not count as a
   * foreign one. Only this connection's counter moves; another process's
   * write since the last read still shows in `data_version` at the next one.
   */
  acknowledgeOwnWrite(): void {
    this.changes = this.totalChanges();
  }

  /** Before an own write: a write through this connection the cache did not make empties it (cheap: no data_version read). */
  validateOwnConnection(): void {
    if (this.totalChanges() !== this.changes) {
      this.empty();
      this.changes = -1;
    }
  }

  private empty(): void {
    this.matches.clear();
    this.sources.clear();
  }

  matchesFor(keyHash: string, fingerprint: string): FingerprintMatch[] | undefined {
    return this.matches.get(keyHash)?.get(fingerprint);
  }

  rememberMatches(keyHash: string, fingerprint: string, found: FingerprintMatch[]): void {
    let byFingerprint = this.matches.get(keyHash);
    if (!byFingerprint) this.matches.set(keyHash, (byFingerprint = new GenerationalCache(MAX_FINGERPRINTS)));
    byFingerprint.set(fingerprint, found);
  }

  /** A new turn: it becomes the newest match of each of its keys whose list is known (once: a turn may be added twice). */
  addTurn(keyHash: string, keys: readonly (string | undefined)[], match: FingerprintMatch, source: ReplaySource, size: number): void {
    const byFingerprint = this.matches.get(keyHash);
    for (const key of keys) {
      const known = key === undefined ? undefined : byFingerprint?.get(key);
      if (known && !known.some((listed) => listed.id === match.id)) byFingerprint!.set(key!, [match, ...known].slice(0, MATCHES_PER_FINGERPRINT));
    }
    this.rememberSource(source, size);
  }

  sourceFor(turnId: string): ReplaySource | undefined {
    return this.sources.get(turnId);
  }

  /** `size`: the characters of its stored carrier columns, which the caller has at hand. */
  rememberSource(source: ReplaySource, size: number): void {
    if (size <= MAX_CACHED_SOURCE_CHARS) this.sources.set(source.id, source);
  }
}

/** The replay caches reading through each connection (one per session store on it). */
const cachesOf = new WeakMap<Db, ReplayCache[]>();

/**
 * A write through `db` to tables replay never reads (the Responses API's
 * own tables): the replay caches on that connection stay valid. Without
 * this, every response stored emptied them, and the next request read all
 * its stored turns from SQLite again.
 */
export function writeOutsideReplay<T>(db: Db, write: () => T): T {
  // a cache that already missed a write stays behind, and empties itself at its next read
  const valid = (cachesOf.get(db) ?? []).filter((cache) => cache.accountedFor());
  const result = write();
  for (const cache of valid) cache.acknowledgeOwnWrite();
  return result;
}
