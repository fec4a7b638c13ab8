import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { StringDecoder } from "node:string_decoder";
import { Readable } from "node:stream";
import { Agent, type Dispatcher } from "undici";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import {
  DEFAULT_DEADLINES,
  UnreadableChunkError,
  type BodyPieces,
  type CarriedAnswerHead,
  type HttpCodec,
  type JsonObject,
  type RawAnswer,
  type RawRequest,
  type StreamItem,
  type StreamPart,
  type UpstreamCall,
  type UpstreamDeadlines,
  type UpstreamResult,
  partsOf,
} from "../contract.js";
import { parseObject } from "../json-readers.js";
import { skipSpace } from "../carried/json-spans.js";
import { BatchQueue, type Backpressure } from "./batch-queue.js";
import { cancellationOf, type Cancellation } from "./cancellation.js";
import { DeadlineCuts } from "./deadline-cuts.js";
import { OpenExchanges } from "./open-exchanges.js";
import { deadlineMessage, watchDeadlines, type DeadlineName, type Watched } from "./deadline-watch.js";
import { carriedAnswerHeaders, passedOnHeaders } from "./passed-on-headers.js";
import { withTraceContext } from "../../foundation/tracing/trace-hooks.js";
import { postRaw } from "./raw-exchange.js";

/** Bytes of a stream read from the upstream and not yet taken by its client, past which the upstream is no longer read. */
export const DEFAULT_STREAM_BUFFER = 1024 * 1024;

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
  private readonly streamBuffer: number;
  /** Exchanges cut by a deadline, per provider (for /metrics). */
  readonly deadlineCuts = new DeadlineCuts();
  readonly open = new OpenExchanges(); // requests sent and not yet answered in full: the core's exchanges and plugins' own posts

  constructor(options: { streamBufferBytes?: number } = {}) {
    this.streamBuffer = options.streamBufferBytes ?? DEFAULT_STREAM_BUFFER;
  }

  send(codec: HttpCodec, call: UpstreamCall): Promise<UpstreamResult> {
    // a carried call goes upstream as the client sent it, changed only where carrierd must (docs/architecture.md#two-paths)
    const carried = call.carried !== undefined && codec.buildCarriedRequest !== undefined;
    const wire = call.carried && codec.buildCarriedRequest ? codec.buildCarriedRequest(call, call.carried) : codec.buildRequest(call);
    const { origin, path } = this.target(wire.url);
    const deadlines = call.provider.deadlines ?? DEFAULT_DEADLINES;
    const cancellation = cancellationOf(call);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(
        codec,
        {
          provider: call.provider.id,
          stream: call.stream,
          carried,
          cancellation,
          deadlines,
          streamBuffer: this.streamBuffer,
          deadlineCuts: this.deadlineCuts,
          open: this.open,
        },
        resolve,
        reject,
      );
      // undici's own timers are a backstop behind the deadline watch (which also knows when carrierd itself paused the stream)
      this.agent.dispatch(
        {
          origin,
          path,
          method: "POST",
          ...sentBody(withTraceContext(wire.headers, cancellation), wire.body),
          headersTimeout: deadlines.firstByteMs + 1_000,
          bodyTimeout: deadlines.idleMs + 1_000,
        },
        exchange,
      );
    });
  }

  /** A request a plugin built and reads itself (docs/plugins.md), in the same pool and under the same deadlines. */
  post(call: UpstreamCall, wire: RawRequest): Promise<RawAnswer> {
    const headers = withTraceContext(wire.headers, cancellationOf(call));
    return postRaw(this.agent, call, headers === wire.headers ? wire : { ...wire, headers }, this.open);
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

/**
 * The request's headers and body as undici takes them. A body in pieces (a
 * large carried body, see BodyPieces) is written piece by piece under the
 * Content-Length of them all, never copied into one buffer; a route whose
 * headers name a Content-Length of their own gets it whole.
 */
function sentBody(headers: Record<string, string>, body: string | Buffer | BodyPieces): { headers: Record<string, string>; body: string | Buffer | Readable } {
  if (typeof body === "string" || Buffer.isBuffer(body)) return { headers, body };
  if (Object.keys(headers).some((name) => name.toLowerCase() === "content-length")) return { headers, body: Buffer.concat(body.pieces, body.byteLength) };
  return { headers: { ...headers, "content-length": String(body.byteLength) }, body: Readable.from(body.pieces, { objectMode: false }) };
}

type Settle = (result: UpstreamResult) => void;

const isDeadlineName = (cause: unknown): cause is DeadlineName => cause === "first_byte" || cause === "idle" || cause === "total";

/** What an exchange needs of its call, and no more: the call's body (the whole history) must not live as long as the answer does. */
interface ExchangeOptions {
  readonly provider: string;
  readonly stream: boolean;
  /** The answer's bytes go on to the client as they arrive (StreamPart `answer-bytes`), its head with them. */
  readonly carried: boolean;
  readonly cancellation: Cancellation;
  readonly deadlines: UpstreamDeadlines;
  readonly streamBuffer: number;
  readonly deadlineCuts: DeadlineCuts;
  readonly open: OpenExchanges;
}

/**
 * One request and its response. Until the status is known the caller waits;
 * an error status or a non-streaming answer is read whole, a stream is
 * decoded as it arrives into batches of parts (the parts of one network read
 * together) that the caller iterates.
 */
class Exchange implements Dispatcher.DispatchHandler, Watched {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private settled = false;
  private countedOpen = true;
  /** Error statuses and whole answers: the body's chunks. */
  private chunks: Buffer[] | undefined;
  /** An error status's headers worth passing on to the client. */
  private errorHeaders: Record<string, string> | undefined;
  /** A carried call's answer head, for its client. */
  private head: CarriedAnswerHead | undefined;
  private stream: SseDecoding | undefined;
  private stopWatching: (() => void) | undefined;
  private unwatchDeadlines: (() => void) | undefined;
  private readonly onCancel = () => this.controller?.abort(abortError());
  readonly deadlines: UpstreamDeadlines;
  sentAt = 0;
  lastReadAt = 0;
  paused = false;

  constructor(
    private readonly codec: HttpCodec,
    private readonly call: ExchangeOptions,
    private readonly resolve: Settle,
    private readonly reject: (error: unknown) => void,
  ) {
    this.deadlines = call.deadlines;
    call.open.opened();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.sentAt = performance.now();
    this.stopWatching = this.call.cancellation.onCancel(this.onCancel);
    this.unwatchDeadlines = watchDeadlines(this);
  }

  /** A deadline passed: the exchange is aborted with the error the client is told. */
  expire(name: DeadlineName): void {
    this.controller?.abort(new GatewayError("upstream_timeout", deadlineMessage(this.call.provider, name, this.deadlines), null, { cause: name }));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    this.lastReadAt = performance.now();
    if (this.call.carried) this.head = { status: statusCode, headers: carriedAnswerHeaders(headers) };
    if (statusCode >= 400 || !this.call.stream) {
      this.chunks = [];
      if (statusCode >= 400) this.errorHeaders = this.call.carried ? this.head!.headers : passedOnHeaders(statusCode, headers);
      return;
    }
    this.stream = new SseDecoding(this.codec.createStreamDecoder(), controller, this.call.provider, this.call.carried, {
      limit: this.call.streamBuffer,
      pause: () => {
        this.paused = true;
        controller.pause();
      },
      resume: () => {
        this.paused = false;
        controller.resume();
      },
    });
    this.settle(this.head ? { ok: true, parts: this.stream.batches, head: this.head } : { ok: true, parts: this.stream.batches });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.lastReadAt = performance.now();
    if (this.stream) this.stream.feed(chunk);
    else this.chunks?.push(chunk);
  }

  onResponseEnd(): void {
    this.closed();
    if (this.stream) {
      this.stream.end();
      return;
    }
    const bytes = Buffer.concat(this.chunks ?? []);
    const text = withoutBom(bytes.toString("utf8"));
    if (this.status >= 400) {
      this.settle({ ok: false, status: this.status, body: text, headers: this.errorHeaders });
      return;
    }
    // a carried answer that is a JSON array is a stream's chunks sent whole (Gemini's streamGenerateContent without alt=sse)
    if (this.head && bytes[skipSpace(bytes, 0)] === 0x5b) {
      this.settle({ ok: true, parts: decodeChunkArray(this.codec, this.call.provider, text, bytes), head: this.head });
      return;
    }
    // a body that is JSON but not an object (null, an array) is refused the same way: a codec reads an object
    const parsed = parseObject(text);
    if (!parsed) {
      this.fail(new GatewayError("upstream_error", `upstream ${this.call.provider} answered with a body that is not a JSON object`, null, { status: 502 }));
      return;
    }
    if (this.head) this.settle({ ok: true, parts: decodeWhole(this.codec, parsed, bytes), head: this.head });
    else this.settle({ ok: true, parts: decodeWhole(this.codec, parsed) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.closed();
    const timeout = this.asTimeout(error);
    if (timeout) {
      if (this.stream) this.stream.fail(timeout);
      else this.fail(timeout);
    } else if (this.stream) this.stream.fail(error.name === "AbortError" ? error : interrupted(this.call.provider, error));
    else if (error.name === "AbortError")
      this.fail(new GatewayError("client_closed_request", "the client closed the request before the upstream answered", null, { cause: error }));
    else if (this.status !== 0)
      this.fail(new GatewayError("upstream_error", `upstream ${this.call.provider} failed mid-answer: ${error.message}`, null, { status: 502, cause: error }));
    else this.fail(new GatewayError("upstream_unreachable", `upstream ${this.call.provider} is unreachable: ${error.message}`, null, { cause: error }));
  }

  /** A deadline of ours, or one of undici's backstop timers, as the client is told it; counted per provider and deadline. */
  private asTimeout(error: Error): GatewayError | undefined {
    if (error instanceof GatewayError) {
      if (isDeadlineName(error.cause)) this.call.deadlineCuts.note(this.call.provider, error.cause);
      return error;
    }
    const code = (error as NodeJS.ErrnoException).code;
    const deadline = code === "UND_ERR_HEADERS_TIMEOUT" ? "first_byte" : code === "UND_ERR_BODY_TIMEOUT" ? "idle" : undefined;
    if (deadline === undefined) return undefined;
    this.call.deadlineCuts.note(this.call.provider, deadline);
    return new GatewayError("upstream_timeout", deadlineMessage(this.call.provider, deadline, this.deadlines), null, { cause: error });
  }

  /** Answered in full, failed or aborted: nothing more to watch, and no longer open. */
  private closed(): void {
    this.stopWatching?.();
    this.unwatchDeadlines?.();
    if (this.countedOpen) this.call.open.closed();
    this.countedOpen = false;
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
async function* decodeWhole(codec: HttpCodec, body: JsonObject, carried?: Buffer): AsyncIterable<readonly StreamPart[]> {
  const parts = codec.decodeResponse(body);
  yield carried ? [{ type: "answer-bytes", bytes: carried }, ...parts] : parts;
}

/** A stream's chunks sent as one JSON array, each read as the stream's event would be, in order, by one stream decoder. */
async function* decodeChunkArray(codec: HttpCodec, provider: string, text: string, bytes: Buffer): AsyncIterable<readonly StreamPart[]> {
  let chunks: unknown;
  try {
    chunks = JSON.parse(text);
  } catch {
    chunks = undefined;
  }
  if (!Array.isArray(chunks)) throw new GatewayError("upstream_error", `upstream ${provider} answered with a body that is not JSON`, null, { status: 502 });
  const decode = codec.createStreamDecoder();
  const parts: StreamPart[] = [{ type: "answer-bytes", bytes }];
  for (const chunk of chunks) parts.push(...partsOf(decode({ data: JSON.stringify(chunk) })));
  yield parts;
}

/** SSE bytes → events → canonical parts, one network read at a time: the parts of one read leave together. */
class SseDecoding {
  readonly batches: BatchQueue<StreamPart>;
  private readonly parser: EventSourceParser;
  /** Bytes read since the last batch was pushed: the size the next batch is pushed with. */
  private unpushedBytes = 0;
  /** The stream said it is done: `[DONE]`, or a part that gives the reason the answer ended. Without it the turn is incomplete. */
  private terminated = false;
  /** UTF-8 across network reads; StringDecoder, because a streaming TextDecoder costs several times more per read on Node 20. */
  private readonly text = new StringDecoder("utf8");
  private pending: StreamPart[] = [];
  /** Until the first text: a leading byte order mark is dropped, as TextDecoder did (the SSE parser only knows it as bytes read as Latin-1). */
  private started = false;
  /** A codec throws for an error the upstream reports mid-stream; what arrived before it still goes out first. */
  private failure: { error: unknown } | undefined;

  constructor(
    decode: (event: { event?: string; data: string }) => StreamItem,
    private readonly controller: Dispatcher.DispatchController,
    private readonly provider: string,
    /** Each network read's bytes go first into its batch (StreamPart `answer-bytes`). */
    private readonly carried: boolean,
    backpressure: Backpressure,
  ) {
    // the consumer stopped reading (its client left, or it failed): stop the upstream too
    this.batches = new BatchQueue<StreamPart>(() => controller.abort(abortError()), backpressure);
    this.parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (this.failure) return;
        if (message.data === "[DONE]") {
          this.terminated = true;
          return;
        }
        try {
          const decoded = decode(message); // the parser's own event object: no copy per event
          if (isPart(decoded)) {
            this.pending.push(decoded);
            if (decoded.type === "finish") this.terminated = true;
          } else {
            for (const part of decoded) {
              this.pending.push(part);
              if (part.type === "finish") this.terminated = true;
            }
          }
        } catch (error) {
          this.failure = { error: error instanceof UnreadableChunkError ? corrupt(provider, error) : error };
        }
      },
    });
  }

  feed(chunk: Buffer): void {
    if (this.failure) return;
    this.unpushedBytes += chunk.length;
    if (this.carried) this.pending.push({ type: "answer-bytes", bytes: chunk });
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
    if (!this.failure && !this.terminated) {
      // a clean end without the stream's terminal marker: the answer was cut off, and must not pass for a whole one
      this.failure = {
        error: new GatewayError(
          "upstream_stream_truncated",
          `upstream ${this.provider} ended its stream without a finish reason or [DONE]: the answer is incomplete`,
        ),
      };
    }
    if (this.pending.length > 0) this.batches.push(this.pending, this.unpushedBytes);
    this.pending = [];
    // the answer is read through: nothing left to abort
    if (this.failure) this.batches.fail(this.failure.error);
    else this.batches.end();
  }

  fail(error: unknown): void {
    this.flush();
    this.batches.fail(error);
  }

  private flush(): void {
    if (this.pending.length > 0) {
      this.batches.push(this.pending, this.unpushedBytes);
      this.pending = [];
      this.unpushedBytes = 0;
    }
    if (this.failure) {
      this.batches.fail(this.failure.error);
      if (!this.controller.aborted) this.controller.abort(abortError()); // nothing after the error is read
    }
  }
}

/** An unreadable event, as the client is told it. */
function corrupt(provider: string, error: UnreadableChunkError): GatewayError {
  return new GatewayError(
    "upstream_stream_corrupt",
    `upstream ${provider} sent a stream that cannot be read (${error.message}): the answer is incomplete`,
    null,
    { cause: error },
  );
}

/** The connection broke mid-stream. */
function interrupted(provider: string, error: Error): GatewayError {
  return new GatewayError("upstream_stream_interrupted", `upstream ${provider} broke off its stream: ${error.message}; the answer is incomplete`, null, {
    cause: error,
  });
}

function isPart(item: StreamItem): item is StreamPart {
  return !Array.isArray(item);
}

/** Text decoded from UTF-8 without its byte order mark, if it had one (undici's `body.text()` and TextDecoder drop it too). */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function abortError(): Error {
  return Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}
