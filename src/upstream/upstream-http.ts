import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { StringDecoder } from "node:string_decoder";
import { Agent, type Dispatcher } from "undici";
import { GatewayError } from "../errors/gateway-error.js";
import type { HttpCodec, JsonObject, StreamItem, StreamPart, UpstreamCall, UpstreamResult } from "../plugins/contract.js";
import { BatchQueue } from "./batch-queue.js";
import { cancellationOf, type Cancellation } from "./cancellation.js";

/**
 * The core's HTTP transport for plugins: one keep-alive pool per origin
 * (undici), the SSE parser (eventsource-parser), and error bodies read
 * whole so the fallback can classify them before the client sees anything.
 *
 * It dispatches with a handler of its own rather than undici's `request()`:
 * the response body goes straight from the socket into the SSE parser and
 * the codec, with no Readable stream and no async iteration per network
 * read in between — on a relayed stream that was a measurable share of the
 * gateway's CPU.
 */
export class UpstreamHttp {
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 64, pipelining: 1 });
  /** `url` → origin and path: a route's URL is the same for every request, parsing it each time is waste. */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  send(codec: HttpCodec, call: UpstreamCall): Promise<UpstreamResult> {
    const wire = codec.buildRequest(call);
    const { origin, path } = this.target(wire.url);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(codec, { provider: call.provider.id, stream: call.stream, cancellation: cancellationOf(call) }, resolve, reject);
      this.agent.dispatch({ origin, path, method: "POST", headers: wire.headers, body: wire.body, headersTimeout: 300_000, bodyTimeout: 600_000 }, exchange);
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private target(url: string): { origin: string; path: string } {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.targets.size >= 1_000) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }
}

type Settle = (result: UpstreamResult) => void;

/** What an exchange needs of its call, and no more: the call's body (the whole history) must not live as long as the answer does. */
interface ExchangeOptions {
  readonly provider: string;
  readonly stream: boolean;
  readonly cancellation: Cancellation;
}

/**
 * One request and its response. Until the status is known the caller waits;
 * an error status or a non-streaming answer is read whole, a stream is
 * decoded as it arrives into batches of parts (the parts of one network read
 * together) that the caller iterates.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private settled = false;
  /** Error statuses and whole answers: the body's chunks. */
  private chunks: Buffer[] | undefined;
  private stream: SseDecoding | undefined;
  private stopWatching: (() => void) | undefined;
  private readonly onCancel = () => this.controller?.abort(abortError(undefined));

  constructor(
    private readonly codec: HttpCodec,
    private readonly call: ExchangeOptions,
    private readonly resolve: Settle,
    private readonly reject: (error: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.stopWatching = this.call.cancellation.onCancel(this.onCancel);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
    if (statusCode >= 400 || !this.call.stream) {
      this.chunks = [];
      return;
    }
    this.stream = new SseDecoding(this.codec.createStreamDecoder(), controller);
    this.settle({ ok: true, parts: this.stream.batches });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.stream) this.stream.feed(chunk);
    else this.chunks?.push(chunk);
  }

  onResponseEnd(): void {
    this.stopWatching?.();
    if (this.stream) {
      this.stream.end();
      return;
    }
    const text = withoutBom(Buffer.concat(this.chunks ?? []).toString("utf8"));
    if (this.status >= 400) {
      this.settle({ ok: false, status: this.status, body: text });
      return;
    }
    let parsed: JsonObject;
    try {
      parsed = JSON.parse(text) as JsonObject;
    } catch {
      this.fail(new GatewayError("upstream_error", `upstream ${this.call.provider} answered with a body that is not JSON`, null, { status: 502 }));
      return;
    }
    this.settle({ ok: true, parts: decodeWhole(this.codec, parsed) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.stopWatching?.();
    if (this.stream) this.stream.fail(error);
    else if (error.name === "AbortError") this.fail(new GatewayError("client_closed_request", "the client closed the request before the upstream answered", null, { cause: error }));
    else if (this.status !== 0) this.fail(new GatewayError("upstream_error", `upstream ${this.call.provider} failed mid-answer: ${error.message}`, null, { status: 502, cause: error }));
    else this.fail(new GatewayError("upstream_unreachable", `upstream ${this.call.provider} is unreachable: ${error.message}`, null, { cause: error }));
  }

  private settle(result: UpstreamResult): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(result);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
  }
}

/** Decoded when read, so a codec that refuses a body (an error inside a 200) fails the turn as an upstream error, not the request as a 500. */
async function* decodeWhole(codec: HttpCodec, body: JsonObject): AsyncIterable<readonly StreamPart[]> {
  yield codec.decodeResponse(body);
}

/** SSE bytes → events → canonical parts, one network read at a time: the parts of one read leave together. */
class SseDecoding {
  readonly batches: BatchQueue<StreamPart>;
  private readonly parser: EventSourceParser;
  /** UTF-8 across network reads; StringDecoder measured ~10× cheaper than a streaming TextDecoder on Node 20. */
  private readonly text = new StringDecoder("utf8");
  private pending: StreamPart[] = [];
  /** Until the first text: a leading byte order mark is dropped, as TextDecoder did (the SSE parser only knows it as bytes read as Latin-1). */
  private started = false;
  /** A codec throws for an error the upstream reports mid-stream; what arrived before it still goes out first. */
  private failure: { error: unknown } | undefined;

  constructor(
    decode: (event: { event?: string; data: string }) => StreamItem,
    private readonly controller: Dispatcher.DispatchController,
  ) {
    // the consumer stopped reading (its client left, or it failed): stop the upstream too
    this.batches = new BatchQueue<StreamPart>(() => controller.abort(abortError(undefined)));
    this.parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (message.data === "[DONE]" || this.failure) return;
        try {
          const decoded = decode(message); // the parser's own event object: no copy per event
          if (isPart(decoded)) this.pending.push(decoded);
          else for (const part of decoded) this.pending.push(part);
        } catch (error) {
          this.failure = { error };
        }
      },
    });
  }

  feed(chunk: Buffer): void {
    if (this.failure) return;
    let text = this.text.write(chunk);
    if (!this.started && text !== "") {
      this.started = true;
      text = withoutBom(text);
    }
    this.parser.feed(text);
    this.flush();
  }

  end(): void {
    if (!this.failure) this.parser.feed(this.text.end());
    this.flush();
    this.batches.end();
  }

  fail(error: unknown): void {
    this.flush();
    this.batches.fail(error);
  }

  private flush(): void {
    if (this.pending.length > 0) {
      this.batches.push(this.pending);
      this.pending = [];
    }
    if (this.failure) {
      this.batches.fail(this.failure.error);
      if (!this.controller.aborted) this.controller.abort(abortError(undefined)); // nothing after the error is read
    }
  }
}

function isPart(item: StreamItem): item is StreamPart {
  return !Array.isArray(item);
}

/** Text decoded from UTF-8 without its byte order mark, if it had one (undici's `body.text()` and TextDecoder drop it too). */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function abortError(reason: unknown): Error {
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}
