import type { ServerResponse } from "node:http";
import { joinBytes } from "../foundation/util/join-bytes.js";
import { watchForKeepalive, type KeepaliveTarget } from "./keepalive.js";

/**
 * The constant bytes around the variable JSON of one event shape, encoded
 * once per stream (see `SseWriter.dataInFrame`).
 */
export interface DataFrame {
  readonly before: Buffer;
  readonly after: Buffer;
}

/** `data: ${jsonBefore}…${jsonAfter}\n\n` as bytes. The JSON around the middle must hold no raw CR or LF (JSON text never does). */
export function dataFrame(jsonBefore: string, jsonAfter: string): DataFrame {
  if (/[\r\n]/.test(jsonBefore)) throw new Error("SSE data cannot contain CR or LF");
  return { before: Buffer.from(`data: ${jsonBefore}`), after: frameEnd(jsonAfter) };
}

/** The end of a frame is the same for every stream (the JSON after a delta's value): encoded once. */
const frameEnds = new Map<string, Buffer>();

function frameEnd(jsonAfter: string): Buffer {
  let bytes = frameEnds.get(jsonAfter);
  if (!bytes) {
    if (/[\r\n]/.test(jsonAfter)) throw new Error("SSE data cannot contain CR or LF");
    if (frameEnds.size >= 64) frameEnds.clear(); // a few shapes in practice; bounded all the same
    frameEnds.set(jsonAfter, (bytes = Buffer.from(`${jsonAfter}\n\n`)));
  }
  return bytes;
}

const DATA = Buffer.from("data: ");
const EVENT = Buffer.from("event: ");
const EVENT_DATA = Buffer.from("\ndata: ");
const END_OF_EVENT = Buffer.from("\n\n");
const KEEPALIVE = Buffer.from(": keepalive\n\n");
const EVENT_STREAM_HEAD = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** Sends the head of an event stream, unless it went out already (FirstByteWait opens the stream early). */
export function openEventStream(response: ServerResponse, headers: Record<string, string> = {}): void {
  if (!response.headersSent) response.writeHead(200, { ...EVENT_STREAM_HEAD, ...headers });
}

/**
 * Server-sent events to a client. Data is always JSON (no raw CR/LF can
 * reach the framing), event names are checked, and an idle stream gets
 * `: keepalive` comments so proxies keep it open.
 *
 * Events written in one pass of the event loop (all the parts decoded from
 * one upstream network chunk) leave in one socket write: a write per event
 * cost more than the JSON it carries. The pass is kept as pieces (constant
 * Buffers and the JSON strings between them) and encoded straight into one
 * Buffer: concatenating the pass into a string, which Buffer.from then
 * flattened on the heap before encoding it, made garbage of every pass.
 */
export class SseWriter implements KeepaliveTarget {
  private lastWrite = Date.now();
  /**
   * This pass's bytes, in order: `pending[0 .. count)`. The array is reused
   * and its slots cleared after each write; emptying it with `length = 0`
   * would give up its backing store and allocate a new one every pass.
   */
  private readonly pending: (string | Buffer | undefined)[] = [];
  private count = 0;
  /** Set by holdUntilEnd: nothing leaves before end(). */
  private held = false;
  private readonly intervalMs: number;
  private readonly unwatch: () => void;

  constructor(
    private readonly response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
    /** What a keepalive is in this stream: a `: keepalive` comment, or the API's own ping event (Anthropic's `ping`). */
    private readonly keepaliveFrame: Buffer = KEEPALIVE,
  ) {
    openEventStream(response, headers);
    // the head leaves with the first event when one is written in this pass (one socket write, not two), else on its own at once
    process.nextTick(() => {
      if (this.count === 0 && !this.closed) response.flushHeaders(); // (headersSent is already true after writeHead)
    });
    this.intervalMs = keepaliveSeconds * 1000;
    this.unwatch = watchForKeepalive(this);
  }

  keepalive(now: number): boolean {
    if (this.closed) return false;
    if (now - this.lastWrite >= this.intervalMs && this.accepts()) this.pending[this.count++] = this.keepaliveFrame;
    return true;
  }

  private get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /** `json` is already-serialised JSON text (callers build it once). */
  data(json: string, event?: string): void {
    if (event !== undefined && /[\r\n]/.test(event)) throw new Error("SSE event names cannot contain CR or LF");
    if (!this.accepts()) return;
    if (event !== undefined) {
      this.pending[this.count++] = EVENT;
      this.pending[this.count++] = event;
      this.pending[this.count++] = EVENT_DATA;
    } else this.pending[this.count++] = DATA;
    this.pending[this.count++] = json;
    this.pending[this.count++] = END_OF_EVENT;
  }

  /**
   * An event whose JSON is `frame`'s constant bytes around `json`: for a
   * stream's many deltas of one shape, so that each costs no string but its
   * own value's JSON.
   */
  dataInFrame(frame: DataFrame, json: string): void {
    if (!this.accepts()) return;
    this.pending[this.count++] = frame.before;
    this.pending[this.count++] = json;
    this.pending[this.count++] = frame.after;
  }

  /**
   * The upstream has finished and only the turn's commit is left (a SQLite
   * transaction in this turn of the event loop): what this pass wrote leaves
   * with the end, in one socket write instead of two. On loopback or a LAN,
   * a write costs the sender more CPU than a stream's last events take to
   * build.
   */
  holdUntilEnd(): void {
    this.held = true;
  }

  end(finalLine?: string): void {
    this.unwatch();
    if (this.closed) return this.discard();
    if (finalLine !== undefined) this.pending[this.count++] = finalLine;
    this.response.end(this.take());
  }

  /** False once the response is closed; the first piece of a pass schedules its write. */
  private accepts(): boolean {
    if (this.closed) return false;
    if (this.count === 0) process.nextTick(this.flush);
    return true;
  }

  /** Runs once the current pass (its promise continuations included) is done. */
  private readonly flush = (): void => {
    if (this.closed) return this.discard();
    if (this.held) return;
    const bytes = this.take();
    if (bytes === undefined) return;
    this.lastWrite = Date.now();
    this.response.write(bytes);
  };

  /** Empties the pass into one Buffer (undefined when it is empty). */
  private take(): Buffer | undefined {
    const { pending, count } = this;
    if (count === 0) return undefined;
    this.count = 0;
    const bytes = joinBytes(pending, count);
    pending.fill(undefined, 0, count);
    return bytes;
  }

  private discard(): void {
    this.pending.fill(undefined, 0, this.count);
    this.count = 0;
  }
}
