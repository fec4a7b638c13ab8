import type { ServerResponse } from "node:http";
import { watchForKeepalive, type KeepaliveTarget } from "./keepalive.js";

/**
 * Server-sent events to a client. Data is always JSON (no raw CR/LF can
 * reach the framing), event names are checked, and an idle stream gets
 * `: keepalive` comments so proxies keep it open.
 *
 * Events written in one pass of the event loop (all the parts decoded from
 * one upstream network chunk) leave in one socket write: a write per event
 * cost more than the JSON it carries.
 */
export class SseWriter implements KeepaliveTarget {
  private lastWrite = Date.now();
  private pending = "";
  private readonly intervalMs: number;
  private readonly unwatch: () => void;

  constructor(
    private readonly response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
  ) {
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no", ...headers });
    // the head leaves with the first event when one is written in this pass (one socket write, not two), else on its own at once
    process.nextTick(() => {
      if (this.pending === "" && !this.closed) response.flushHeaders(); // (headersSent is already true after writeHead)
    });
    this.intervalMs = keepaliveSeconds * 1000;
    this.unwatch = watchForKeepalive(this);
  }

  keepalive(now: number): boolean {
    if (this.closed) return false;
    if (now - this.lastWrite >= this.intervalMs) this.raw(": keepalive\n\n");
    return true;
  }

  private get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /** `json` is already-serialised JSON text (callers build it once). */
  data(json: string, event?: string): void {
    if (event !== undefined && /[\r\n]/.test(event)) throw new Error("SSE event names cannot contain CR or LF");
    this.raw(event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`);
  }

  end(finalLine?: string): void {
    this.unwatch();
    const rest = this.pending + (finalLine ?? "");
    this.pending = "";
    if (this.closed) return;
    this.response.end(Buffer.from(rest));
  }

  private raw(text: string): void {
    if (this.closed) return;
    if (this.pending === "") process.nextTick(this.flush);
    this.pending += text;
  }

  /** Runs once the current pass (its promise continuations included) is done. */
  private readonly flush = (): void => {
    const text = this.pending;
    this.pending = "";
    if (text === "" || this.closed) return;
    this.lastWrite = Date.now();
    // as bytes: a string costs a chunked response one more pass over it (its byte length) before it is encoded
    this.response.write(Buffer.from(text));
  };
}
