import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The pipeline's side of tracing (docs/operators.md#opentelemetry): named
 * one-line calls the HTTP server, the turn and the upstream client make.
 * Nothing here loads OpenTelemetry. A request's trace is found through
 * objects the request path already hands along — its response, its turn's
 * cancellation, its turn id — and not through an AsyncLocalStorage, whose
 * promise hooks would cost every promise of the process. Until a gateway
 * starts tracing, every hook is one variable read and hands its argument
 * back untouched: tracing off costs nothing per request.
 */

/** What a traced request records; implemented where OpenTelemetry is loaded (request-spans.ts). */
export interface RequestTrace {
  /** The request's one store read before its upstream call: a child span until it settles. */
  storeRead<T>(read: Promise<T>): Promise<T>;
  /** The finished turn made durable: a child span until it is. */
  commit<T>(write: Promise<T>): Promise<T>;
  /** An upstream attempt begins; a second one, after an unknown-field rejection, says which status refused the first and which fields it drops. */
  attempt(upstream: UpstreamTarget, retry: RetryCause | undefined): void;
  /** What replay decided for turn `turnId`, and the messages it asked with (exported only on the operator's opt-in). */
  replay(turnId: string, plan: ReplayDecision, messages: readonly unknown[]): void;
  /** The upstream request's headers with the current attempt's `traceparent`. */
  propagate(headers: Record<string, string>): Record<string, string>;
  /** The response is finished (the HTTP server's last word on it). */
  responded(route: string, status: number): void;
}

/** Which upstream an attempt calls (a turn plan's verdict key). */
export interface UpstreamTarget {
  readonly provider: string;
  readonly host: string;
  readonly model: string;
}

/** Why an attempt is a retry: the status that refused the one before, and the fields now left out. */
export interface RetryCause {
  readonly refusedStatus: number;
  readonly dropped: readonly string[];
}

/** The parts of a turn plan the span tells (TurnPlan, structurally). */
export interface ReplayDecision {
  readonly match: { readonly turnIds: ReadonlyMap<number, string> };
  /** Fields a verdict leaves out. */
  readonly rejected: readonly string[];
  readonly effective: readonly string[];
  /** What the first call attached, per assistant message. */
  readonly firstAttached: readonly { readonly fields: readonly string[] }[];
}

/** Starts a request's trace; given to the HTTP server of a gateway that traces. */
export interface RequestTracer {
  began(request: IncomingMessage, response: ServerResponse): void;
}

/** Whether any gateway in this process traces: the hooks' one check when none does. */
let active = false;
const byResponse = new WeakMap<ServerResponse, RequestTrace>();
/** A turn's cancellation (one per request, handed to every upstream call of it) → its request's trace. */
const byCancellation = new WeakMap<object, RequestTrace>();
/** Open turns by id → their request's trace: the event bus names a turn by its id. */
const byTurn = new Map<string, RequestTrace>();

/** Called by the tracing side (open-telemetry.ts) for every request it traces. */
export function registerRequestTrace(response: ServerResponse, trace: RequestTrace): void {
  active = true;
  byResponse.set(response, trace);
}

/** The trace of an open turn, by the id its events carry. */
export function traceOfTurn(turnId: unknown): RequestTrace | undefined {
  return typeof turnId === "string" ? byTurn.get(turnId) : undefined;
}

/** The turn is over: its id no longer finds the trace. */
export function forgetTurn(turnId: string): void {
  byTurn.delete(turnId);
}

/** The ingress starts a turn for `response` with `cancellation`: the turn's hooks find the request's trace by it. */
export function traceTurn(response: ServerResponse, cancellation: object): void {
  if (!active) return;
  const trace = byResponse.get(response);
  if (trace) byCancellation.set(cancellation, trace);
}

/** The HTTP server is done with the response: its span ends. */
export function traceResponded(response: ServerResponse, route: string): void {
  if (!active) return;
  byResponse.get(response)?.responded(route, response.statusCode);
}

export function traceStoreRead<T>(cancellation: object, read: Promise<T>): Promise<T> {
  const trace = active ? byCancellation.get(cancellation) : undefined;
  return trace ? trace.storeRead(read) : read;
}

export function traceUpstreamAttempt(cancellation: object, upstream: UpstreamTarget, retry?: RetryCause): void {
  if (active) byCancellation.get(cancellation)?.attempt(upstream, retry);
}

/** The turn's plan, and its id: the bus's events of that turn go to this request's trace. */
export function traceReplay(cancellation: object, turnId: string, plan: ReplayDecision, messages: readonly unknown[]): void {
  const trace = active ? byCancellation.get(cancellation) : undefined;
  if (!trace) return;
  byTurn.set(turnId, trace);
  trace.replay(turnId, plan, messages);
}

export function traceCommit<T>(turnId: string, write: Promise<T>): Promise<T> {
  const trace = active ? byTurn.get(turnId) : undefined;
  return trace ? trace.commit(write) : write;
}

/** The headers themselves when the request is not traced; a copy with `traceparent` (and `tracestate`) otherwise. */
export function withTraceContext(headers: Record<string, string>, cancellation: object): Record<string, string> {
  const trace = active ? byCancellation.get(cancellation) : undefined;
  return trace ? trace.propagate(headers) : headers;
}
