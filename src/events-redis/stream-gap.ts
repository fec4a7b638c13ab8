import type { Redis } from "ioredis";
import { compareEventIds, type GapNotice } from "../events/event-feed.js";

/** What a resume from `lastId` will miss; undefined when the stream still holds everything after it. */
export interface StreamGap {
  readonly notice: GapNotice;
  /** Where reading continues: after `lastId`, or from the start of a stream that was replaced. */
  readonly from: string;
}

interface StreamInfo {
  readonly lastGenerated: string;
  readonly maxDeleted: string;
  readonly firstEntry: string | undefined;
}

/**
 * Whether reading the stream after `lastId` would skip events. `XADD …
 * MAXLEN ~` trims the oldest entries and Redis remembers the newest id it
 * ever trimmed: an id older than that lost what came after it. An id the
 * stream never held, older than its first entry, means the stream is not the
 * one the id came from (Redis restarted without it): what came after it in
 * the old stream is unknown, so that is announced too, and reading starts at
 * the new stream's beginning.
 */
export async function gapAfter(redis: Redis, key: string, lastId: string): Promise<StreamGap | undefined> {
  const info = await streamInfo(redis, key);
  const reset = (): StreamGap => ({
    from: "0-0",
    notice: { type: "gap", reason: "trimmed", after_event_id: lastId, message: `events after ${lastId} may be missing: the event stream no longer holds that id (Redis lost the stream, e.g. it restarted without it); what the stream holds now follows` },
  });
  if (!info) return lastId === "0-0" ? undefined : reset();
  if (compareEventIds(lastId, info.maxDeleted) < 0) {
    return {
      from: lastId,
      notice: { type: "gap", reason: "trimmed", after_event_id: lastId, ...(info.firstEntry ? { first_event_id: info.firstEntry } : {}), message: `events after ${lastId} were trimmed from the event stream (it keeps its newest MAXLEN events); the oldest it still holds follow` },
    };
  }
  if (lastId === info.maxDeleted || lastId === "0-0") return undefined;
  if (compareEventIds(lastId, info.lastGenerated) > 0) return reset();
  if (info.firstEntry !== undefined && compareEventIds(lastId, info.firstEntry) < 0) return reset();
  return undefined;
}

async function streamInfo(redis: Redis, key: string): Promise<StreamInfo | undefined> {
  let reply: unknown;
  try {
    reply = await redis.call("XINFO", "STREAM", key);
  } catch (error) {
    if (error instanceof Error && /no such key/i.test(error.message)) return undefined;
    throw error;
  }
  const fields = reply as unknown[];
  const value = (name: string) => {
    const at = fields.indexOf(name);
    return at < 0 ? undefined : fields[at + 1];
  };
  const first = value("first-entry") as [string, unknown] | null;
  return { lastGenerated: String(value("last-generated-id")), maxDeleted: String(value("max-deleted-entry-id") ?? "0-0"), firstEntry: first ? first[0] : undefined };
}
