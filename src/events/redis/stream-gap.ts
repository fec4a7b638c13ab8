import type { Redis } from "ioredis";
import { compareEventIds, type GapNotice } from "../event-feed.js";

/** What a resume from `lastId` will miss; undefined when the stream still holds everything after it. */
export interface StreamGap {
  readonly notice: GapNotice;
  /** Where reading continues: after `lastId`, or from the start of a stream that was replaced. */
  readonly from: string;
}

interface StreamInfo {
  readonly lastGenerated: string;
  readonly firstEntry: string | undefined;
}

/**
 * Whether reading the stream after `lastId` would skip events. `XADD …
 * MAXLEN ~` trims the oldest entries, and Redis keeps no record of which ids
 * it trimmed: an id the stream no longer holds, older than its first entry,
 * may have been followed by entries that are gone too, so that is announced
 * (at worst once too often: when `lastId` was the very last entry trimmed).
 * An id newer than anything the stream ever held comes from a stream that no
 * longer exists (Redis restarted without it): that is announced, and reading
 * starts at the new stream's beginning.
 */
export async function gapAfter(redis: Redis, key: string, lastId: string): Promise<StreamGap | undefined> {
  if (lastId === "0-0") return undefined;
  const info = await streamInfo(redis, key);
  const lost = (): StreamGap => ({
    from: "0-0",
    notice: {
      type: "gap",
      reason: "trimmed",
      after_event_id: lastId,
      message: `events after ${lastId} may be missing: the event stream never held that id (Redis lost the stream, e.g. it restarted without it); what the stream holds now follows`,
    },
  });
  if (!info || compareEventIds(lastId, info.lastGenerated) > 0) return lost();
  if (info.firstEntry === undefined || compareEventIds(lastId, info.firstEntry) >= 0) return undefined;
  const held = await redis.xrange(key, lastId, lastId);
  if (held.length > 0) return undefined;
  return {
    from: lastId,
    notice: {
      type: "gap",
      reason: "trimmed",
      after_event_id: lastId,
      first_event_id: info.firstEntry,
      message: `events after ${lastId} were trimmed from the event stream (it keeps about its newest CARRIERD_EVENTS_MAXLEN entries); the oldest it still holds follow`,
    },
  };
}

async function streamInfo(redis: Redis, key: string): Promise<StreamInfo | undefined> {
  let reply: unknown;
  try {
    reply = await redis.call("XINFO", "STREAM", key);
  } catch (error) {
    if (error instanceof Error && /no such key/i.test(error.message)) return undefined;
    throw error;
  }
  // XINFO STREAM answers a flat list of names and values; the first entry is [id, fields], or null in an empty stream
  const fields: unknown[] = Array.isArray(reply) ? reply : [];
  const value = (name: string) => {
    const at = fields.indexOf(name);
    return at < 0 ? undefined : fields[at + 1];
  };
  const first = value("first-entry");
  return { lastGenerated: String(value("last-generated-id")), firstEntry: Array.isArray(first) ? String(first[0]) : undefined };
}
