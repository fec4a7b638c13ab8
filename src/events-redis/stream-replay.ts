import type { Redis } from "ioredis";
import type { Replay, ReplaySink } from "../events/event-feed.js";
import { gapAfter } from "./stream-gap.js";
import { gapEvent, hubEventOf, type RawEntry } from "./stream-entry.js";

/** Entries per XRANGE while resuming; between batches the connection's socket may drain. */
const REPLAY_BATCH = 500;

/**
 * A reconnecting subscriber's backlog: what the stream holds after its last
 * id, oldest first, read until the stream's end, with a gap notice first when
 * part of it is gone. Its filter applies as to live events.
 */
export async function replayAfter(redis: Redis, stream: string, lastId: string, sink: ReplaySink): Promise<Replay> {
  const gap = await gapAfter(redis, stream, lastId);
  if (gap) sink.deliver(gapEvent(gap.notice));
  let cursor = gap?.from ?? lastId;
  // what the connection already got live is not sent again
  const end = sink.until === undefined ? "+" : `(${sink.until}`;
  for (;;) {
    if (!sink.open) return { cursor };
    const entries = (await redis.xrangeBuffer(stream, `(${cursor}`, end, "COUNT", REPLAY_BATCH)) as unknown as RawEntry[];
    for (const entry of entries) {
      cursor = entry[0].toString("latin1");
      const event = hubEventOf(entry);
      if (event) sink.deliver(event);
    }
    if (entries.length < REPLAY_BATCH) return { cursor };
    await sink.ready();
  }
}
