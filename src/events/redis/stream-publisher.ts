import type { Redis } from "ioredis";
import type { EventBus, GatewayEvent } from "../../foundation/event-bus/event-bus.js";
import type { GapNotice } from "../event-feed.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { entryFields } from "./stream-entry.js";

/**
 * Events are written at most this long after they were published, together:
 * one stream entry per flush. A dashboard does not see 5 ms; a streamed
 * answer of a thousand tokens costs a handful of writes instead of a thousand.
 */
const FLUSH_MS = 5;
/** A flush holds at most this many events, so one entry stays small. */
const MAX_BATCH = 256;

export type DropReason = "disconnected" | "queue_full" | "write_failed";

export interface PublisherSettings {
  readonly stream: string;
  readonly maxLength: number;
  readonly queueLimit: number;
  /** Names this instance in the gap notices it writes. */
  readonly instance: string;
}

/**
 * Writes every event of this gateway's bus to the shared stream, without
 * ever making a request wait: the bus listener only appends to a queue, and
 * every FLUSH_MS the queue goes to Redis as one `XADD … MAXLEN ~` entry.
 * Events that cannot be written (Redis down, or so slow that the queue and
 * the writes awaiting a reply reach `queueLimit`) are dropped and counted;
 * an outage is logged once when it starts and once when it ends, and then a
 * gap notice with the count goes into the stream so every subscriber learns
 * what it missed.
 */
export class StreamPublisher {
  private queue: GatewayEvent[] = [];
  private waiting = 0;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly counts: Record<DropReason, number> = { disconnected: 0, queue_full: 0, write_failed: 0 };
  private outage: { since: string; dropped: number; reason: DropReason } | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly redis: Redis,
    bus: EventBus,
    private readonly settings: PublisherSettings,
    private readonly log: Logger,
  ) {
    this.unsubscribe = bus.subscribe((event) => this.publish(event));
    redis.on("ready", () => this.recovered());
  }

  /** Events dropped since start, by reason. */
  get dropped(): Readonly<Record<DropReason, number>> {
    return this.counts;
  }

  /** Whether events are being written now. */
  get writing(): boolean {
    return this.redis.status === "ready" && this.outage === undefined;
  }

  close(): void {
    this.unsubscribe();
    if (this.queue.length > 0) this.flush();
  }

  private publish(event: GatewayEvent): void {
    if (this.redis.status !== "ready") return this.drop("disconnected", 1);
    if (this.queue.length + this.waiting >= this.settings.queueLimit) return this.drop("queue_full", 1);
    this.queue.push(event);
    if (this.queue.length >= MAX_BATCH) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
    }
  }

  private flush(): void {
    this.scheduled = false;
    clearTimeout(this.timer);
    const events = this.queue;
    this.queue = [];
    if (events.length === 0) return;
    if (this.redis.status !== "ready") return this.drop("disconnected", events.length);
    this.waiting += events.length;
    this.redis.xadd(this.settings.stream, "MAXLEN", "~", this.settings.maxLength, "*", ...entryFields(events)).then(
      () => {
        this.waiting -= events.length;
        this.recovered();
      },
      (error: unknown) => {
        this.waiting -= events.length;
        this.drop("write_failed", events.length, error);
      },
    );
  }

  private drop(reason: DropReason, count: number, error?: unknown): void {
    this.counts[reason] += count;
    if (this.outage) {
      this.outage.dropped += count;
      return;
    }
    this.outage = { since: new Date().toISOString(), dropped: count, reason };
    this.log.warn(
      { reason, status: this.redis.status, err: error },
      `events: cannot write to the Redis stream (${reason}); dropping events until it works again`,
    );
  }

  /**
   * Redis is back (connected again, or a write went through after drops):
   * say so once, and tell every subscriber through the stream.
   */
  private recovered(): void {
    const outage = this.outage;
    if (!outage || this.redis.status !== "ready") return;
    this.outage = undefined;
    const notice: GapNotice = {
      type: "gap",
      reason: "dropped",
      count: outage.dropped,
      instance: this.settings.instance,
      since: outage.since,
      ts: new Date().toISOString(),
      message: `${outage.dropped} events of instance ${this.settings.instance} were dropped since ${outage.since}: it could not write them to the event stream`,
    };
    this.redis.xadd(this.settings.stream, "MAXLEN", "~", this.settings.maxLength, "*", ...entryFields([notice])).then(
      () => this.log.info({ dropped: outage.dropped, since: outage.since }, `events: writing to the Redis stream again; ${outage.dropped} events were dropped`),
      (error: unknown) => {
        // still failing: the outage goes on, and its notice is written when a write next succeeds
        const current = this.outage;
        this.outage = { since: outage.since, dropped: outage.dropped + (current?.dropped ?? 0), reason: current?.reason ?? "write_failed" };
        this.log.debug({ err: error }, "events: the gap notice could not be written yet");
      },
    );
  }
}
