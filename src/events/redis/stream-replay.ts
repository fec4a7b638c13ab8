import type { Redis } from "ioredis";
import { compareEventIds, entryOf, type Replay, type ReplaySink } from "../event-feed.js";
import { gapAfter } from "./stream-gap.js";
import { entryId, gapEvent, hubEventsOf, type RawEntry } from "./stream-entry.js";

/** Entries per XRANGE while resuming; between batches the connection's socket may drain. */
const REPLAY_BATCH = 100;

/**
 * A reconnecting subscriber's backlog: the events the stream holds after its
 * last id, oldest first, up to the stream's end (or to the first event the
 * connection already got live), with a gap notice first when part of it is
 * gone. Its filter applies as to live events.
 */
export async function replayAfter(redis: Redis, stream: string, lastId: string, sink: ReplaySink): Promise<Replay> {
  const gap = await gapAfter(redis, stream, entryOf(lastId));
  if (gap) sink.deliver(gapEvent({ ...gap.notice, after_event_id: lastId }));
  const after = gap?.from === "0-0" ? "0-0" : lastId;
  const { until } = sink;
  // the entry of an id with an index may hold events after it: read it again, from its start
  let start = after === "0-0" ? "-" : after.includes(":") ? entryOf(after) : `(${after}`;
  const end = until === undefined ? "+" : entryOf(until);
  let cursor = after;
  for (;;) {
    if (!sink.open) return { cursor };
    const entries: RawEntry[] = await redis.xrangeBuffer(stream, start, end, "COUNT", REPLAY_BATCH);
    for (const entry of entries) {
      for (const event of hubEventsOf(entry)) {
        const id = event.event_id!;
        if (compareEventIds(id, after) <= 0 || (until !== undefined && compareEventIds(id, until) >= 0)) continue;
        sink.deliver(event);
        cursor = id;
      }
    }
    if (entries.length < REPLAY_BATCH) return { cursor };
    start = `(${entryId(entries.at(-1)!)}`;
    await sink.ready();
  }
}
