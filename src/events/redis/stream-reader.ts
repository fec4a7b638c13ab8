import type { Redis } from "ioredis";
import type { HubEvent } from "../event-feed.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { gapAfter } from "./stream-gap.js";
import { entryId, gapEvent, hubEventsOf } from "./stream-entry.js";

/** Entries per XREAD (each a flush of up to 256 events); after a full batch the reader checks for a gap before its next read. */
const READ_COUNT = 100;
/** How long one XREAD blocks: short enough that a half-open connection is noticed. */
const BLOCK_MS = 5000;
/** Pause before retrying a read that failed while the connection looked ready. */
const RETRY_MS = 1000;

/**
 * The one blocking `XREAD` of this instance, on a connection of its own: it
 * follows the stream from where it stood at start and hands every entry, in
 * stream order, to the hub. After losing Redis it continues from the last id
 * it read, so a short outage loses nothing the stream still holds; what the
 * stream no longer holds is announced to the subscribers as a gap.
 */
export class StreamReader {
  private readonly listeners = new Set<(event: HubEvent) => void>();
  private lastId: string | undefined;
  private running = false;
  private failing = false;
  /** The last read filled its batch: the reader may have fallen further behind than the stream's window. */
  private behind = false;
  private positioned: (() => void) | undefined;
  /** Resolves once the reader knows where the stream ends (its start), so events published after that reach subscribers. */
  readonly started = new Promise<void>((resolve) => (this.positioned = resolve));

  constructor(
    private readonly redis: Redis,
    private readonly stream: string,
    private readonly log: Logger,
  ) {}

  /** Whether the last read worked. */
  get healthy(): boolean {
    return this.running && !this.failing && this.redis.status === "ready";
  }

  listen(listener: (event: HubEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.running = false;
    this.redis.disconnect();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.connected();
        if (!this.running) return;
        if (this.lastId === undefined) {
          this.lastId = await this.newestId();
          this.positioned?.();
        } else if (this.failing || this.behind) await this.checkGap(this.lastId);
        if (this.failing) this.log.info({ stream: this.stream }, "events: reading the Redis stream again");
        this.failing = false;
        const reply = await this.redis.xreadBuffer("COUNT", READ_COUNT, "BLOCK", BLOCK_MS, "STREAMS", this.stream, this.lastId);
        const entries = reply?.[0]?.[1] ?? [];
        for (const entry of entries) {
          this.lastId = entryId(entry);
          // with nobody subscribed here the entries only move the reader on: nothing is decoded
          if (this.listeners.size > 0) for (const event of hubEventsOf(entry)) this.emit(event);
        }
        this.behind = entries.length === READ_COUNT;
      } catch (error) {
        if (!this.running) return;
        if (!this.failing)
          this.log.warn(
            { err: error, stream: this.stream },
            "events: cannot read the Redis stream; subscribers get other instances' events again once it is back",
          );
        this.failing = true;
        if (this.redis.status === "ready") await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    }
  }

  private emit(event: HubEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private async checkGap(lastId: string): Promise<void> {
    const gap = await gapAfter(this.redis, this.stream, lastId);
    if (!gap) return;
    this.lastId = gap.from;
    this.emit(gapEvent(gap.notice));
  }

  private async newestId(): Promise<string> {
    const newest = await this.redis.xrevrange(this.stream, "+", "-", "COUNT", 1);
    return newest[0]?.[0] ?? "0-0";
  }

  /** Resolves once the connection is ready (ioredis reconnects by itself), or when stopping. */
  private connected(): Promise<void> {
    if (this.redis.status === "ready") return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.redis.off("ready", done);
        this.redis.off("end", done);
        resolve();
      };
      this.redis.on("ready", done);
      this.redis.on("end", done);
    });
  }
}
