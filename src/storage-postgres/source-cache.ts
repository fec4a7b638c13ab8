import type { ReplaySource } from "../storage/turns.js";
import { GenerationalCache } from "../util/generational-cache.js";
import { toReplaySource, type ReplayRow } from "./row-mapping.js";

const MAX_SOURCES = 4_096;
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
 */
export class SourceCache {
  private readonly sources = new GenerationalCache<string, ReplaySource>(MAX_SOURCES);

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
