import type { ReplaySource } from "../turns.js";
import { GenerationalCache } from "../../foundation/util/generational-cache.js";
import { toReplaySource, type ReplayRow } from "../rows.js";

const MAX_SOURCES = 4_096;
/** Keys whose newest match is remembered: a request resends its whole history, a key per turn. */
const MAX_NEWEST = 4 * MAX_SOURCES;
/** A turn whose carriers are larger than this is built anew from its row each time rather than held in memory. */
const MAX_CACHED_SOURCE_CHARS = 256 * 1024;

/**
 * The carriers of stored turns as objects, by turn id, kept in this
 * process. It can never be stale: a stored turn's carriers never change
 * after its commit, and which turns a request replays is still decided by
 * the database on every request (the lookup's matches, on any instance's
 * writes); the cache only answers a row the database just returned with the
 * object built for that turn before. That object's identity is what lets
 * replay reuse, request after request, the assistant message it built and
 * that message's serialised bytes (carriers/replay.ts): without it every
 * request parsed, rebuilt and serialised each replayed turn again.
 *
 * It also remembers which turn each key last matched newest, so the next
 * lookup can tell the database which of those turns' carriers it holds and
 * receive only the others: a hint, never an answer (the database still
 * says which turn is newest; a hint that is out of date costs those
 * carriers being sent, nothing else).
 */
export class SourceCache {
  private readonly sources = new GenerationalCache<string, ReplaySource>(MAX_SOURCES);
  private readonly newest = new GenerationalCache<string, string>(MAX_NEWEST);

  /** The carriers held for the turns these keys last matched newest, by turn id (kept here: the cache may drop them meanwhile). */
  heldFor(keys: readonly string[]): Map<string, ReplaySource> {
    const held = new Map<string, ReplaySource>();
    for (const key of keys) {
      const id = this.newest.get(key);
      const source = id === undefined ? undefined : this.sources.get(id);
      if (source) held.set(id!, source);
    }
    return held;
  }

  /** The turn `key` matched newest in the answer just read. */
  matchedNewest(key: string, turnId: string): void {
    this.newest.set(key, turnId);
  }

  /** The turn's carriers from its row: the object built for it before, or a new one (kept unless very large). */
  fromRow(row: ReplayRow): ReplaySource {
    const known = this.sources.get(row.id);
    if (known) return known;
    const source = toReplaySource(row);
    const chars = (row.reasoning_text?.length ?? 0) + (row.reasoning_details?.length ?? 0) + (row.native_record?.length ?? 0);
    if (chars <= MAX_CACHED_SOURCE_CHARS) this.sources.set(row.id, source);
    return source;
  }
}
