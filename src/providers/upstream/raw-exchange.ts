import { request, type Dispatcher } from "undici";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import { DEFAULT_DEADLINES, type RawAnswer, type RawRequest, type UpstreamCall } from "../contract.js";
import { deadlineMessage, watchDeadlines, type Watched } from "./deadline-watch.js";
import type { OpenExchanges } from "./open-exchanges.js";

/**
 * A POST whose answer the plugin decodes itself (`PluginContext.http.post`),
 * watched by the same deadline sweep as the core's SSE exchanges: the
 * routes.yaml `first_byte`, `idle` and `total` of the call's provider, not
 * undici's own five- and ten-minute timers. The idle clock does not run
 * while the plugin holds a chunk it was given and has not asked for the
 * next one (carrierd waiting on its client, not the upstream being idle).
 * It counts in `open` until its answer is read through, fails, or a
 * deadline cuts it (so an answer the plugin never reads stops counting).
 */
export async function postRaw(agent: Dispatcher, call: UpstreamCall, wire: RawRequest, open: OpenExchanges): Promise<RawAnswer> {
  const provider = call.provider.id;
  const deadlines = call.provider.deadlines ?? DEFAULT_DEADLINES;
  const expiry = new AbortController();
  open.opened();
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unwatch();
    open.closed();
  };
  const watched: Watched = {
    deadlines,
    sentAt: performance.now(),
    lastReadAt: 0,
    paused: false,
    expire: (name) => {
      expiry.abort(new GatewayError("upstream_timeout", deadlineMessage(provider, name, deadlines), null, { cause: name }));
      close();
    },
  };
  const unwatch = watchDeadlines(watched);
  const reason = (error: unknown, failure: (cause: Error) => GatewayError): unknown => {
    if (expiry.signal.aborted) return expiry.signal.reason;
    if (call.signal.aborted || !(error instanceof Error) || error.name === "AbortError") return error;
    return failure(error);
  };
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(wire.url, {
      method: "POST",
      headers: wire.headers,
      body: wire.body,
      dispatcher: agent,
      signal: AbortSignal.any([call.signal, expiry.signal]),
      // a backstop behind the deadline watch, as on the SSE path
      headersTimeout: deadlines.firstByteMs + 1_000,
      bodyTimeout: deadlines.idleMs + 1_000,
    });
  } catch (error) {
    close();
    throw reason(error, (cause) => new GatewayError("upstream_unreachable", `upstream ${provider} is unreachable: ${cause.message}`, null, { cause }));
  }
  watched.lastReadAt = performance.now();
  const source = answer.body;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of source) {
        watched.lastReadAt = performance.now();
        watched.paused = true;
        yield chunk as Uint8Array;
        watched.paused = false;
      }
    } catch (error) {
      throw reason(
        error,
        (cause) =>
          new GatewayError("upstream_stream_interrupted", `upstream ${provider} broke off its answer: ${cause.message}; the answer is incomplete`, null, {
            cause,
          }),
      );
    } finally {
      close();
    }
  }
  const body = Object.assign(chunks(), {
    async text(): Promise<string> {
      const parts: Buffer[] = [];
      for await (const chunk of body) parts.push(Buffer.from(chunk));
      return Buffer.concat(parts).toString("utf8");
    },
  });
  return { status: answer.statusCode, body };
}
