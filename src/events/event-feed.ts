import type { EventBus } from "../foundation/event-bus/event-bus.js";

/**
 * The JSON text of an event that arrived from a shared stream, id included,
 * sent to subscribers as it is: the hub does not parse and re-serialise what
 * another instance already serialised.
 */
export const WIRE_TEXT = Symbol("wireText");
/** Marks a control message (a gap notice) that every connection receives, whatever its filter. */
export const CONTROL = Symbol("control");

/** What the hub needs of an event to filter and send it. Local events are whole `GatewayEvent`s. */
export interface HubEvent {
  readonly type: string;
  readonly session_id?: string;
  /** The stream id, when the event came from a shared stream (events: redis). */
  readonly event_id?: string;
  readonly [WIRE_TEXT]?: Buffer;
  readonly [CONTROL]?: true;
}

/** `{"type":"gap",…}`: events a subscriber can no longer get (schemas/events/control/gap.schema.json). */
export interface GapNotice {
  readonly type: "gap";
  /**
   * `trimmed`: past the stream's window (or the stream was lost, as when
   * Redis restarted empty); `dropped`: an instance could not write them;
   * `behind`: this connection fell behind while resuming; `unavailable`: the
   * stream could not be read.
   */
  readonly reason: "trimmed" | "dropped" | "behind" | "unavailable";
  readonly message: string;
  readonly [key: string]: unknown;
}

/** Where a resume stopped: the id of the last event it sent (the client's own id when there was nothing newer). */
export interface Replay {
  readonly cursor: string;
}

/** How a resume hands events (and, first, a gap notice when some are gone) to the connection that asked for it. */
export interface ReplaySink {
  deliver(event: HubEvent): void;
  /** Resolves once the connection can take more (its socket drained), so a long backlog is not dropped. */
  ready(): Promise<void>;
  readonly open: boolean;
  /** The first event the connection received live (before it asked to resume): the backlog stops before it. */
  readonly until: string | undefined;
}

/** What `/health` and `/metrics` say of the event feed. */
export interface FeedHealth {
  readonly backend: "local" | "redis";
  /** `degraded`: events cannot be shared right now (requests are unaffected). */
  readonly status: "ok" | "degraded";
  readonly reason?: string;
}

/**
 * Where the hub's events come from: this gateway's own bus, or (events:
 * redis) the stream every instance writes, which gives every event an id a
 * client can resume from.
 */
export interface EventFeed {
  listen(listener: (event: HubEvent) => void): () => void;
  /** Sends the events after `lastId` to `sink`, oldest first, up to the stream's end; undefined when events carry no ids (local). */
  readonly replay?: (lastId: string, sink: ReplaySink) => Promise<Replay>;
  health(): FeedHealth;
  /** Events that could not be shared, by reason (`disconnected`, `queue_full`, `write_failed`); empty when local. */
  dropped(): Readonly<Record<string, number>>;
  /** What `/v1/capabilities` shows: never a password. */
  describe(): Record<string, unknown>;
  close(): Promise<void>;
}

/** The default feed: the gateway's own bus, events without ids. */
export function localFeed(bus: EventBus): EventFeed {
  return {
    listen: (listener) => bus.subscribe(listener),
    health: () => ({ backend: "local", status: "ok" }),
    dropped: () => ({}),
    describe: () => ({ backend: "local" }),
    close: async () => {},
  };
}

/**
 * An event id from a shared stream: `<ms>-<seq>` of the stream entry that
 * holds it, then `:<index>`, its place among that entry's events. An id
 * without the index stands for the entry's last event.
 */
export const EVENT_ID = /^\d{1,20}-\d{1,20}(:\d{1,9})?$/;

/** Orders two event ids (or entry ids), numerically. */
export function compareEventIds(a: string, b: string): number {
  const [aEntry = "", aIndex] = a.split(":");
  const [bEntry = "", bIndex] = b.split(":");
  const [aMs = "", aSeq = ""] = aEntry.split("-");
  const [bMs = "", bSeq = ""] = bEntry.split("-");
  return (
    compareDigits(aMs, bMs) ||
    compareDigits(aSeq, bSeq) ||
    (aIndex === undefined ? Infinity : Number(aIndex)) - (bIndex === undefined ? Infinity : Number(bIndex)) ||
    0
  );
}

/** The stream entry an event id belongs to. */
export function entryOf(eventId: string): string {
  return eventId.split(":")[0] ?? eventId;
}

function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, "");
  const y = b.replace(/^0+(?=\d)/, "");
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}
