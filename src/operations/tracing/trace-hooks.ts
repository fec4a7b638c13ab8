import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage } from "node:http";

/**
 * The pipeline's side of tracing (docs/operators.md#opentelemetry): named
 * one-line calls the turn and the upstream client make, and the request
 * server's wrapper. Nothing here loads OpenTelemetry. Until a gateway starts
 * tracing no request runs inside `requests`, so every hook is one property
 * read and hands its argument back untouched: tracing off costs nothing
 * per request.
 */

/** What a traced request records; implemented where OpenTelemetry is loaded (request-spans.ts). */
export interface RequestTrace {
  /** The request's one store read before its upstream call: a child span until it settles. */
  storeRead<T>(read: Promise<T>): Promise<T>;
  /** The finished turn made durable: a child span until it is. */
  commit<T>(write: Promise<T>): Promise<T>;
  /** An upstream attempt begins (a second one after an unknown-field rejection names the fields it drops). */
  attempt(upstream: UpstreamTarget, dropped: readonly string[] | undefined): void;
  /** What replay decided for the turn, and the messages it asked with (exported only on the operator's opt-in). */
  replay(plan: ReplayDecision, messages: readonly unknown[]): void;
  /** The upstream request's headers with the current attempt's `traceparent`. */
  propagate(headers: Record<string, string>): Record<string, string>;
}

/** Which upstream an attempt calls (a turn plan's verdict key). */
export interface UpstreamTarget {
  readonly provider: string;
  readonly host: string;
  readonly model: string;
}

/** The parts of a turn plan the span tells (TurnPlan, structurally). */
export interface ReplayDecision {
  readonly match: { readonly turnIds: ReadonlyMap<number, string> };
  /** Fields a verdict leaves out. */
  readonly rejected: readonly string[];
  readonly effective: readonly string[];
  readonly first: { readonly attached: readonly { readonly fields: readonly string[] }[] } | undefined;
}

/** Runs a request's handling inside its trace; the HTTP server calls it per request when its gateway traces. */
export interface RequestTracer {
  run(request: IncomingMessage, handle: () => Promise<void>): Promise<void>;
}

let requests: AsyncLocalStorage<RequestTrace> | undefined;

/** The one store every traced request runs in (made by the first gateway that traces). */
export function requestTraces(): AsyncLocalStorage<RequestTrace> {
  return (requests ??= new AsyncLocalStorage<RequestTrace>());
}

/** The trace of the request this code runs for, if its gateway traces. */
export function currentTrace(): RequestTrace | undefined {
  return requests?.getStore();
}

export function traceStoreRead<T>(read: Promise<T>): Promise<T> {
  const trace = requests?.getStore();
  return trace ? trace.storeRead(read) : read;
}

export function traceCommit<T>(write: Promise<T>): Promise<T> {
  const trace = requests?.getStore();
  return trace ? trace.commit(write) : write;
}

export function traceUpstreamAttempt(upstream: UpstreamTarget, dropped?: readonly string[]): void {
  requests?.getStore()?.attempt(upstream, dropped);
}

export function traceReplay(plan: ReplayDecision, messages: readonly unknown[]): void {
  requests?.getStore()?.replay(plan, messages);
}

/** The headers themselves when nothing traces; a copy with `traceparent` (and `tracestate`) otherwise. */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  const trace = requests?.getStore();
  return trace ? trace.propagate(headers) : headers;
}
