/**
 * The one source of live events (docs/events.md). A turn's reasoning delta is
 * published once here and fanned out to every listener: the SSE writer of the
 * request that produced it, the WebSocket hub, metrics. Listeners run
 * synchronously and must not block; the WebSocket hub buffers per connection.
 */

/** Every event type, in the order docs/events.md#events lists them (a client subscribes by these names). */
export const EVENT_TYPES = [
  "turn.started",
  "reasoning.delta",
  "content.delta",
  "tool_call",
  "turn.completed",
  "turn.failed",
  "upstream.failed",
  "verdict.recorded",
  "routes.reloaded",
  "routes.rejected",
  "session.compacted",
] as const;

export type GatewayEventType = (typeof EVENT_TYPES)[number];

/**
 * The data scope of the access key whose turn produced an event, kept
 * beside the event rather than on it: the WebSocket hub filters by it and
 * metrics label by it, no serialisation of the event can write it, and the
 * event object keeps the plain shape every listener and JSON.stringify take
 * their fast paths on (a symbol-keyed property on every event measurably
 * slowed each request). Events of no key (routes reloaded or rejected) have
 * none.
 */
const EVENT_KEYS = new WeakMap<object, string>();

/** Files `event` under the key `keyHash` (see EVENT_KEYS); returns the event. */
export function withKey<T extends object>(event: T, keyHash: string | undefined): T {
  if (keyHash !== undefined) EVENT_KEYS.set(event, keyHash);
  return event;
}

/** The data scope of the key whose turn produced `event`, if any. */
export function keyOf(event: object): string | undefined {
  return EVENT_KEYS.get(event);
}

/** An event as its publisher hands it over; the bus stamps its time (`ts`). */
export interface PublishedEvent {
  type: GatewayEventType;
  session_id?: string;
  turn_id?: string;
  /** Per-turn sequence number. */
  seq?: number;
  /** ISO-8601 time; the bus sets it when a listener reads it and the publisher did not. */
  ts?: string;
  /** A completed turn's token counts as its upstream reported them (`turn.completed`; null when it reported none). */
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  /** Why a turn or an upstream call failed (`turn.failed`, `upstream.failed`). */
  error?: { message?: unknown; code?: unknown; status?: unknown };
  [key: string]: unknown;
}

export interface GatewayEvent extends PublishedEvent {
  /** ISO-8601 time. */
  ts: string;
}

export type EventListener = (event: GatewayEvent) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();
  /** Listeners that asked for some types only (metrics): they do not make every delta worth publishing. */
  private readonly typed = new Map<GatewayEventType, Set<EventListener>>();
  /** Of those, the ones that need only a turn's first delta of a type (metrics: time to first reasoning token). */
  private readonly firstOfTurn = new Map<GatewayEventType, Set<EventListener>>();
  /** Listeners that never read `ts` (metrics time events themselves): an event only they receive is not stamped (an ISO string per event). */
  private readonly untimed = new WeakSet<EventListener>();

  /**
   * Every event, or with `types` only those. With `firstOfTurn` the listener
   * needs only each turn's first delta of those types: a turn's later deltas
   * are not published for it (it may still see them, when someone else wants
   * every one). With `untimed` it never reads the event's `ts`.
   */
  subscribe(listener: EventListener, types?: readonly GatewayEventType[], options: { firstOfTurn?: boolean; untimed?: boolean } = {}): () => void {
    if (options.untimed) this.untimed.add(listener);
    if (!types) {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    }
    const registries = options.firstOfTurn ? [this.typed, this.firstOfTurn] : [this.typed];
    for (const type of types) {
      for (const registry of registries) {
        const set = registry.get(type) ?? new Set<EventListener>();
        set.add(listener);
        registry.set(type, set);
      }
    }
    return () => {
      for (const type of types) for (const registry of registries) registry.get(type)?.delete(listener);
    };
  }

  get listenerCount(): number {
    let typed = 0;
    for (const set of this.typed.values()) typed += set.size;
    return this.listeners.size + typed;
  }

  /**
   * Whether anyone listens for this type. Hot paths (per-token deltas) check
   * this before building an event; `laterInTurn` is for a delta after the
   * turn's first of its type, which first-of-turn listeners do not need.
   */
  wants(type: GatewayEventType, laterInTurn = false): boolean {
    if (this.listeners.size > 0) return true;
    const typed = this.typed.get(type)?.size ?? 0;
    return laterInTurn ? typed > (this.firstOfTurn.get(type)?.size ?? 0) : typed > 0;
  }

  publish(event: PublishedEvent): void {
    const typed = this.typed.get(event.type);
    if (this.listeners.size === 0 && !typed?.size) return;
    // publishers hand over a fresh object; stamping it in place saves a copy per event
    const full = event as GatewayEvent;
    for (const listener of this.listeners) deliver(listener, this.untimed.has(listener) ? full : stamped(full));
    if (typed) for (const listener of typed) deliver(listener, this.untimed.has(listener) ? full : stamped(full));
  }
}

function stamped(event: GatewayEvent): GatewayEvent {
  event.ts ??= new Date().toISOString();
  return event;
}

function deliver(listener: EventListener, event: GatewayEvent): void {
  try {
    listener(event);
  } catch {
    // a broken listener must never break the request that published
  }
}
