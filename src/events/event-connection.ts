import type { Duplex } from "node:stream";
import type { RawData, WebSocket } from "ws";
import type { Logger } from "../foundation/logging/logger.js";
import { seesEventsOf, type Caller } from "../http/keys/caller.js";
import type { Identification } from "../http/keys/key-ring.js";
import { EventFilter } from "./event-filter.js";
import { keyOf } from "../foundation/event-bus/event-bus.js";
import { compareEventIds, CONTROL, EVENT_ID, type HubEvent } from "./event-feed.js";
import type { HubLimits } from "./hub-limits.js";
import { isRecord } from "../foundation/util/json-readers.js";

/** Close codes of the event stream. 4401 and 4403 mirror HTTP 401 and 403; 1013 is "try again later". */
const CLOSE_UNAUTHORIZED = 4401;
const CLOSE_FORBIDDEN = 4403;
const CLOSE_TOO_SLOW = 1013;
/** Messages a peer may send after its auth message while its key is looked up in the store. */
const MAX_MESSAGES_BEFORE_AUTH = 16;

export interface ConnectionHooks {
  /** The upgraded TCP socket under `ws`; the hub corks it to batch writes. */
  readonly socket: Duplex;
  /** The caller a key stands for (the gateway's key ring). */
  identify(key: string): Identification;
  /** The same, a key the ring does not hold looked up in the store first (a key created a moment ago). */
  identifyStored(key: string): Promise<Identification>;
  readonly limits: HubLimits;
  readonly log: Logger;
  /** Called once, when the connection is authenticated (by header or by its auth message). */
  onAuthenticated(connection: EventConnection): void;
  /** Whether events carry ids a client can resume from (events: redis). */
  readonly resumable: boolean;
  /** A subscribe with `last_event_id`: the hub sends what came after it, then the connection goes live. */
  onResume(connection: EventConnection, lastEventId: string): void;
  onDropped(count: number): void;
  onTooSlow(): void;
  onClosed(connection: EventConnection): void;
}

/**
 * One WebSocket subscriber. Sending never waits: when the socket's queue is
 * past `maxBufferedBytes` the event is dropped and counted, and the peer is
 * told how many it missed once it catches up. A peer that stays behind for
 * `stallMs` gets the count and a 1013 close, so its queue cannot grow.
 */
export class EventConnection {
  private authenticated = false;
  /** The key it authenticated with: it sees the events of the keys that key is granted. */
  private authenticatedAs: Caller | undefined;
  private filter = EventFilter.all;
  private dropped = 0;
  private alive = true;
  private stallTimer: NodeJS.Timeout | undefined;
  private authTimer: NodeJS.Timeout | undefined;
  /** While its auth message's key is looked up in the store: the messages that came after it, judged once it is known. */
  private afterAuth: { data: RawData; isBinary: boolean }[] | undefined;
  /** While a resume runs: live events, held until the backlog before them has been sent. */
  private held: { event: HubEvent; payload: Buffer }[] | undefined;
  private heldOverflow = false;
  /** The first stream event handed to this connection: a resume stops before it, since from there on the connection got them live. */
  private firstStreamId: string | undefined;
  /** After a resume: live events up to this id were in its backlog (this instance's reader may lag behind the stream). */
  private sentThrough: string | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly hooks: ConnectionHooks,
  ) {
    ws.on("message", (data, isBinary) => this.receive(data, isBinary));
    ws.on("pong", () => (this.alive = true));
    ws.on("error", (error) => hooks.log.debug({ err: error }, "event stream connection error"));
    ws.on("close", () => this.closed());
  }

  /** Authenticated by the upgrade's header, or given `authTimeoutMs` to send its auth message. */
  start(caller: Caller | undefined): void {
    if (caller) this.authenticate(caller);
    else this.authTimer = setTimeout(() => this.refuse("no auth message in time"), this.hooks.limits.authTimeoutMs);
  }

  get socket(): Duplex {
    return this.hooks.socket;
  }

  get caller(): Caller | undefined {
    return this.authenticatedAs;
  }

  /** Its key was revoked, rotated or expired: closed with 4401; nothing more is delivered. */
  revoke(): void {
    this.refuse("the key was revoked, rotated or expired");
  }

  /** Hands a serialised event to the socket, or drops it when the peer is behind. True when something was written. */
  deliver(event: HubEvent, payload: () => Buffer): boolean {
    if (event.event_id !== undefined) this.firstStreamId ??= event.event_id;
    if (this.held) {
      if (this.held.length < this.hooks.limits.maxResumeHeld) this.held.push({ event, payload: payload() });
      else this.heldOverflow = true;
      return false;
    }
    if (this.sentThrough !== undefined && event.event_id !== undefined) {
      if (compareEventIds(event.event_id, this.sentThrough) <= 0) return false;
      this.sentThrough = undefined;
    }
    return this.send(event, payload);
  }

  /** Whether the socket can take the next batch of a resume; resolves when it has drained. */
  async writable(): Promise<void> {
    const socket = this.hooks.socket;
    if (!socket.writableNeedDrain || this.ws.readyState !== this.ws.OPEN) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        socket.off("drain", done);
        socket.off("close", done);
        resolve();
      };
      socket.on("drain", done);
      socket.on("close", done);
    });
  }

  /** Where a resume's backlog ends: the first event this connection was handed live, if any. */
  get liveSince(): string | undefined {
    return this.firstStreamId;
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  /** A backlog event of a resume: sent now, ahead of the live events held meanwhile. */
  deliverReplayed(event: HubEvent, payload: Buffer): void {
    this.send(event, () => payload);
  }

  /**
   * The backlog has been sent up to `cursor`: the held live events after it
   * follow, and the connection is live. False when more live events came than
   * could be held (the hub then announces a gap).
   */
  endResume(cursor: string): boolean {
    const held = this.held ?? [];
    const complete = !this.heldOverflow;
    this.held = undefined;
    this.heldOverflow = false;
    this.sentThrough = cursor;
    for (const { event, payload } of held) this.deliver(event, () => payload);
    return complete;
  }

  private send(event: HubEvent, payload: () => Buffer): boolean {
    if (!this.authenticated || this.ws.readyState !== this.ws.OPEN) return false;
    if (!event[CONTROL] && (!this.filter.matches(event) || !seesEventsOf(this.authenticatedAs!, keyOf(event)))) return false;
    if (this.ws.bufferedAmount > this.hooks.limits.maxBufferedBytes) {
      this.dropped++;
      this.hooks.onDropped(1);
      this.stallTimer ??= setTimeout(() => this.checkStall(), this.hooks.limits.stallMs);
      return false;
    }
    if (this.stallTimer) {
      clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
    }
    this.flushDropped();
    this.ws.send(payload(), { binary: false });
    return true;
  }

  /** Called by the hub's heartbeat: a peer that did not answer the last ping is gone. */
  heartbeat(): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (!this.alive) {
      this.hooks.log.debug("event stream peer missed a pong; terminating");
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, reason);
  }

  /** Ends the connection without a closing handshake (shutdown of a stalled peer). */
  terminate(): void {
    this.ws.terminate();
  }

  private checkStall(): void {
    this.stallTimer = undefined;
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.flushDropped();
    if (this.ws.bufferedAmount > this.hooks.limits.maxBufferedBytes) {
      this.hooks.log.info({ buffered: this.ws.bufferedAmount }, "closing an event subscriber that stayed behind");
      this.ws.close(CLOSE_TOO_SLOW, "subscriber too slow");
      this.hooks.onTooSlow();
    }
  }

  private flushDropped(): void {
    if (this.dropped === 0) return;
    this.ws.send(JSON.stringify({ type: "dropped", count: this.dropped }));
    this.dropped = 0;
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.afterAuth) {
      // a peer that floods before its key is known is not buffered without bound
      if (this.afterAuth.length < MAX_MESSAGES_BEFORE_AUTH) this.afterAuth.push({ data, isBinary });
      else this.refuse("too many messages before authentication");
      return;
    }
    const message = isBinary ? undefined : parseObject(data);
    if (!this.authenticated) {
      // before auth, anything but the right key ends the connection: nothing is said to an unknown peer
      const key = message?.type === "auth" ? message.key : undefined;
      const identified = typeof key === "string" ? this.hooks.identify(key) : undefined;
      if (typeof key === "string" && identified && !identified.ok && identified.reason === "unknown") return this.authenticateStored(key);
      this.judgeAuth(identified, message?.type === "auth");
      return;
    }
    if (!message) return this.reply({ type: "error", code: "invalid_message", message: 'messages are JSON objects with a "type"' });
    switch (message.type) {
      case "subscribe": {
        const filter = EventFilter.parse(message.sessions, message.events);
        if ("error" in filter) return this.reply({ type: "error", code: "invalid_subscribe", message: filter.error });
        const resumeError = this.resumeProblem(message.last_event_id);
        if (resumeError) return this.reply({ type: "error", code: "invalid_subscribe", message: resumeError });
        this.filter = filter;
        this.reply({ type: "subscribed", ...filter.describe() });
        if (typeof message.last_event_id === "string") {
          this.held = [];
          this.hooks.onResume(this, message.last_event_id);
        }
        return;
      }
      case "auth":
        // already authenticated (by header or an earlier message); a different key is still a wrong key
        if (typeof message.key !== "string") return this.refuse("wrong key");
        {
          const identified = this.hooks.identify(message.key);
          if (!identified.ok || identified.caller.name !== this.authenticatedAs!.name) this.refuse("wrong key");
        }
        return;
      case "ping":
        return this.reply({ type: "pong" });
      default:
        return this.reply({
          type: "error",
          code: "unknown_message",
          message: `unknown message type ${JSON.stringify(String(message.type).slice(0, 64))}; send "subscribe" or "ping"`,
        });
    }
  }

  private resumeProblem(lastEventId: unknown): string | undefined {
    if (lastEventId === undefined || lastEventId === null) return undefined;
    if (!this.hooks.resumable) return "last_event_id: this gateway's events are local and carry no ids (resuming needs events: redis://…)";
    if (typeof lastEventId !== "string" || !EVENT_ID.test(lastEventId)) return 'last_event_id must be an event_id this stream sent ("<ms>-<seq>:<index>")';
    if (this.held) return "last_event_id: a resume is already running on this connection";
    return undefined;
  }

  private judgeAuth(identified: Identification | undefined, sentAuth: boolean): void {
    if (identified?.ok && identified.caller.scopes.has("events")) this.authenticate(identified.caller);
    else if (identified?.ok) this.refuse("this key does not have the events scope", CLOSE_FORBIDDEN);
    else this.refuse(sentAuth ? "wrong key" : "the first message must be an auth message");
  }

  /** A key the ring does not hold: judged once the store has been asked; what the peer sent meanwhile follows in order. */
  private authenticateStored(key: string): void {
    this.afterAuth = [];
    void this.hooks.identifyStored(key).then((identified) => {
      const queued = this.afterAuth ?? [];
      this.afterAuth = undefined;
      if (this.ws.readyState !== this.ws.OPEN) return;
      this.judgeAuth(identified, true);
      if (this.authenticated) for (const { data, isBinary } of queued) this.receive(data, isBinary);
    });
  }

  private authenticate(caller: Caller): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = undefined;
    this.authenticated = true;
    this.authenticatedAs = caller;
    this.hooks.onAuthenticated(this);
  }

  private refuse(reason: string, code = CLOSE_UNAUTHORIZED): void {
    this.authenticated = false;
    this.hooks.log.info({ reason }, "event stream connection refused");
    this.close(code, `${code === CLOSE_FORBIDDEN ? "forbidden" : "unauthorized"}: ${reason}`);
  }

  private reply(body: object): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(body));
  }

  private closed(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.authTimer = this.stallTimer = undefined;
    this.hooks.onClosed(this);
  }
}

function parseObject(data: RawData): Record<string, unknown> | undefined {
  try {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const text = buffer.toString("utf8");
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
