import type { ServerResponse } from "node:http";
import { GatewayError } from "../foundation/errors/gateway-error.js";

/**
 * Backpressure from a streaming client (RequestContext.pace): past `limit`
 * bytes written and not yet taken by the client's socket, the turn waits
 * before it reads more of the upstream's answer — and the upstream, no
 * longer read, is paused in turn (BatchQueue). A client that takes nothing
 * for `stallMs` is cut off; closing its response aborts the upstream call.
 */
export function clientPace(response: ServerResponse, limit: number, stallMs: number): () => Promise<void> | undefined {
  return () => (response.writableLength > limit && !response.destroyed ? caughtUp(response, limit, stallMs) : undefined);
}

/** Resolves once the client has taken enough to be under `limit` again; rejects when it took nothing for `stallMs`, or left. */
function caughtUp(response: ServerResponse, limit: number, stallMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // measured once this pass's events are written (SseWriter writes them on the next tick)
    let owed = Infinity;
    setImmediate(() => (owed = Math.min(owed, response.writableLength)));
    // a timer per congestion, not per request: only a client that is behind has one
    const check = setInterval(() => {
      const now = response.writableLength;
      if (now <= limit) return settle(undefined);
      if (now >= owed) {
        const stalled = new GatewayError("client_stalled", `the client read nothing for ${stallMs / 1000} s with ${now} bytes owed; the stream was cut off`);
        settle(stalled);
        response.destroy();
        return;
      }
      owed = now;
    }, stallMs);
    const onDrain = () => settle(undefined);
    const onClose = () => settle(new GatewayError("client_closed_request", "the client closed the stream"));
    function settle(error: GatewayError | undefined): void {
      clearInterval(check);
      response.off("drain", onDrain);
      response.off("close", onClose);
      if (error) reject(error);
      else resolve();
    }
    response.on("drain", onDrain);
    response.on("close", onClose);
  });
}
