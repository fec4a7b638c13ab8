import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { inject, injectable } from "tsyringe";
import { WebSocketServer } from "ws";
import { EVENT_FEED, KEY_RING, LOGGER, OPTIONS } from "../foundation/container/tokens.js";
import { GatewayError, toOpenAIError } from "../foundation/errors/gateway-error.js";
import { bearerToken } from "../http/auth.js";
import type { Identification, KeyRing } from "../http/keys/key-ring.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import type { Logger } from "../foundation/logging/logger.js";
import { EventConnection } from "./event-connection.js";
import { CONTROL, WIRE_TEXT, type EventFeed, type GapNotice, type HubEvent } from "./event-feed.js";
import { hubLimitsFromEnv, type HubLimits } from "./hub-limits.js";
import { checkUpgrade, EVENTS_PATH } from "./upgrade-guard.js";

/**
 * The WebSocket side of the event bus (docs/events.md#get-v1events--the-websocket-stream): `GET /v1/events`. The hub
 * is the feed's one WebSocket listener (and listens only while someone is
 * connected): the gateway's own bus, or with events: redis the stream every
 * instance writes. Each event is serialised at most once and handed to every
 * connection that wants it. Publishing only appends to a queue and sending
 * never waits, so a request is never held up by a subscriber.
 */
@injectable()
export class EventHub {
  private readonly limits: HubLimits;
  private readonly wss: WebSocketServer;
  private readonly subscribers = new Set<EventConnection>();
  private readonly pending = new Set<EventConnection>();
  /** Set while someone is subscribed: with nobody listening, the bus tells publishers not to build per-token events. */
  private unsubscribe: (() => void) | undefined;
  private closing = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private droppedTotal = 0;
  private slowClosedTotal = 0;
  /** Events published during this turn of the event loop, fanned out together right after it. */
  private queue: HubEvent[] = [];

  constructor(
    @inject(EVENT_FEED) private readonly feed: EventFeed,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(LOGGER) private readonly log: Logger,
    @inject(KEY_RING) private readonly keys: KeyRing,
  ) {
    this.limits = hubLimitsFromEnv(options.env);
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: this.limits.maxPayloadBytes });
    this.stopWatchingKeys = keys.onChange(() => this.closeInvalid());
  }

  private readonly stopWatchingKeys: () => void;

  /** A key revoked, rotated or expired since its connection authenticated: the connection is closed with 4401 at once. */
  private closeInvalid(): void {
    for (const connection of this.subscribers) {
      const caller = connection.caller;
      if (caller && !this.keys.stillValid(caller)) connection.revoke();
    }
  }

  /** Authenticated connections. */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Events not sent to some subscriber because it was behind, since start. */
  get droppedEvents(): number {
    return this.droppedTotal;
  }

  /** Subscribers closed with 1013 because they stayed behind, since start. */
  get slowClosed(): number {
    return this.slowClosedTotal;
  }

  /** Starts the heartbeat that finds connections whose peer went away. */
  start(): void {
    this.heartbeat ??= setInterval(() => {
      for (const connection of this.subscribers) connection.heartbeat();
    }, this.limits.pingIntervalMs).unref();
  }

  /** Closes every connection (1001, going away) so the HTTP server can close. */
  close(): void {
    this.closing = true;
    this.stopWatchingKeys();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const connection of [...this.subscribers, ...this.pending]) {
      connection.close(1001, "gateway shutting down");
      // a peer that stopped reading would hold the close handshake open; shutdown does not wait for it
      setTimeout(() => connection.terminate(), 1000).unref();
    }
  }

  /** An upgrade request on `GET /v1/events`, handed over by the HTTP server's endpoint table. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    if (this.closing) {
      socket.destroy();
      return;
    }
    // the header's key, judged once: one the ring does not hold is looked up in the store before the upgrade is decided
    const header = request.headers.authorization === undefined ? undefined : this.keys.identify(bearerToken(request.headers));
    if (header && !header.ok && header.reason === "unknown") {
      void this.keys.identifyStored(bearerToken(request.headers)).then((stored) => this.accept(request, socket, head, stored));
      return;
    }
    this.accept(request, socket, head, header);
  }

  private accept(request: IncomingMessage, socket: Duplex, head: Buffer, header: Identification | undefined): void {
    if (this.closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    const identify = (token: string) => this.keys.identify(token);
    const identifyStored = (token: string) => this.keys.identifyStored(token);
    const decision = checkUpgrade(request, () => header!, this.options.corsOrigins);
    if (!decision.accept) {
      const refusal = new GatewayError(decision.code, decision.message);
      // as the access log writes a refused request: the upgrade never becomes an HTTP response it would see
      this.log.info(
        {
          method: request.method,
          path: EVENTS_PATH,
          model: null,
          status: refusal.status,
          duration_ms: 0,
          error_code: refusal.code,
          error_message: refusal.message,
        },
        "request",
      );
      refuseUpgrade(socket, refusal);
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const connection: EventConnection = new EventConnection(ws, {
        socket,
        identify,
        identifyStored,
        limits: this.limits,
        log: this.log,
        resumable: this.feed.replay !== undefined,
        onResume: (resuming, lastEventId) => this.resume(resuming, lastEventId),
        onAuthenticated: (authenticated) => {
          this.pending.delete(authenticated);
          this.subscribers.add(authenticated);
          this.unsubscribe ??= this.feed.listen((event) => this.enqueue(event));
        },
        onDropped: (count) => (this.droppedTotal += count),
        onTooSlow: () => this.slowClosedTotal++,
        onClosed: (closed) => {
          this.pending.delete(closed);
          this.subscribers.delete(closed);
          if (this.subscribers.size === 0) {
            this.unsubscribe?.();
            this.unsubscribe = undefined;
          }
        },
      });
      this.pending.add(connection);
      connection.start(decision.caller);
    });
  }

  /**
   * Sends what came after `lastEventId` to one connection, then the live
   * events it held meanwhile. What cannot be sent is announced with a gap
   * notice, never skipped in silence.
   */
  private resume(connection: EventConnection, lastEventId: string): void {
    const replay = this.feed.replay;
    if (!replay) return;
    const sink = {
      deliver: (event: HubEvent) => connection.deliverReplayed(event, wireText(event)),
      ready: () => connection.writable(),
      until: connection.liveSince,
      get open() {
        return connection.open;
      },
    };
    const announce = (notice: GapNotice) => connection.deliverReplayed(controlMessage(notice), Buffer.from(JSON.stringify(notice)));
    replay(lastEventId, sink).then(
      ({ cursor }) => {
        if (!connection.endResume(cursor))
          announce({ type: "gap", reason: "behind", message: "more live events arrived while resuming than this connection could hold; some were skipped" });
      },
      (error: unknown) => {
        this.log.warn({ err: error }, "could not read the event stream to resume a subscriber");
        announce({
          type: "gap",
          reason: "unavailable",
          after_event_id: lastEventId,
          message: "the events after last_event_id could not be read (the event stream is unreachable); live events follow",
        });
        connection.endResume(lastEventId);
      },
    );
  }

  private enqueue(event: HubEvent): void {
    if (this.subscribers.size === 0) return;
    this.queue.push(event);
    if (this.queue.length === 1) setImmediate(() => this.drain());
  }

  /**
   * Fan-out runs right after the publisher's turn of the event loop: the
   * request that published writes its own SSE chunk first, and a burst of
   * deltas (one upstream read often holds several) costs each subscriber one
   * write system call, its socket corked for the whole batch. Each event is
   * serialised and encoded once, not once per connection.
   */
  private drain(): void {
    const events = this.queue;
    this.queue = [];
    const corked = new Set<Duplex>();
    for (const event of events) {
      let payload: Buffer | undefined;
      const serialise = () => (payload ??= wireText(event));
      for (const connection of this.subscribers) {
        if (connection.deliver(event, serialise) && !corked.has(connection.socket)) {
          connection.socket.cork();
          corked.add(connection.socket);
        }
      }
    }
    for (const socket of corked) socket.uncork();
  }
}

/** The event's JSON text: as it came from the shared stream, or serialised here (local events). */
function wireText(event: HubEvent): Buffer {
  return event[WIRE_TEXT] ?? Buffer.from(JSON.stringify(event));
}

function controlMessage(notice: GapNotice): HubEvent {
  return { type: notice.type, [CONTROL]: true };
}

/** The refusal in OpenAI's error shape, with the status, type and code of the error table. */
function refuseUpgrade(socket: Duplex, refusal: GatewayError): void {
  const reason = { 401: "Unauthorized", 403: "Forbidden" }[refusal.status] ?? "Forbidden";
  const body = JSON.stringify(toOpenAIError(refusal));
  socket.end(
    `HTTP/1.1 ${refusal.status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
