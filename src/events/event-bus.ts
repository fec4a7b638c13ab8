/**
 * The one source of live events (SPEC §8). A turn's reasoning delta is
 * published once here and fanned out to every listener: the SSE writer of the
 * request that produced it, the WebSocket hub, metrics. Listeners run
 * synchronously and must not block; the WebSocket hub buffers per connection.
 */

export type GatewayEventType =
  | "turn.started"
  | "reasoning.delta"
  | "content.delta"
  | "tool_call"
  | "turn.completed"
  | "turn.failed"
  | "verdict.recorded"
  | "routes.reloaded"
  | "routes.rejected";

export interface GatewayEvent {
  type: GatewayEventType;
  session_id?: string;
  turn_id?: string;
  /** Per-turn sequence number. */
  seq?: number;
  /** ISO-8601 time. */
  ts: string;
  [key: string]: unknown;
}

export type EventListener = (event: GatewayEvent) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  publish(event: Omit<GatewayEvent, "ts"> & { ts?: string }): void {
    if (this.listeners.size === 0) return;
    const full = { ...event, ts: event.ts ?? new Date().toISOString() } as GatewayEvent;
    for (const listener of this.listeners) {
      try {
        listener(full);
      } catch {
        // a broken listener must never break the request that published
      }
    }
  }
}
