import type { ServerResponse } from "node:http";
import type { GatewayError } from "../foundation/errors/gateway-error.js";
import { noteError } from "../foundation/logging/access-log.js";
import { watchForKeepalive, type KeepaliveTarget } from "./keepalive.js";
import { openEventStream } from "./sse.js";

/** How a streaming API ends a stream that failed before its first event: the bytes of its error event(s). */
export type FailureFrame = (failure: GatewayError) => string;

const KEEPALIVE = Buffer.from(": keepalive\n\n");

/**
 * While a streaming request waits for its upstream to answer, its client
 * gets `: keepalive` comments every `intervalMs`, so that proxies and
 * clients with read timeouts keep the connection open. The event stream is
 * opened (200) only when the first comment is due: an upstream that answers
 * or refuses sooner still gives its own status. Once opened, a failure can
 * only be an error event in the stream (`failureFrame`).
 */
export class FirstByteWait implements KeepaliveTarget {
  private readonly since = Date.now();
  private lastWrite = this.since;
  private done = false;
  private opened = false;
  private readonly unwatch: () => void;

  constructor(
    private readonly response: ServerResponse,
    private readonly intervalMs: number,
    /** What a keepalive is in this stream: an SSE comment, or the API's own ping event (Anthropic's `ping`). */
    private readonly keepaliveFrame: Buffer = KEEPALIVE,
  ) {
    this.unwatch = watchForKeepalive(this);
  }

  keepalive(now: number): boolean {
    if (this.done || this.response.destroyed || this.response.writableEnded) return false;
    if (now - this.lastWrite < this.intervalMs) return true;
    if (!this.opened) {
      openEventStream(this.response);
      this.opened = true;
    }
    this.lastWrite = now;
    this.response.write(this.keepaliveFrame);
    return true;
  }

  /** The upstream answered: the stream's writer takes over (the head may already be sent). */
  answered(): void {
    this.done = true;
    this.unwatch();
  }

  /** The turn failed before its stream began: true when the failure went out as an error event (the stream was open). */
  failed(failure: GatewayError, failureFrame: FailureFrame): boolean {
    this.answered();
    if (!this.opened || this.response.writableEnded) return false;
    noteError(this.response, failure);
    this.response.end(failureFrame(failure));
    return true;
  }
}
