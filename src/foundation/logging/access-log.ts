import type { IncomingMessage, ServerResponse } from "node:http";
import type { EventBus } from "../event-bus/event-bus.js";
import type { Logger } from "./logger.js";
import { isRecord } from "../util/json-readers.js";

/** What the handlers learn about a request that the access log names (never bodies, never reasoning). */
interface RequestFacts {
  model?: string;
  /** The error carrierd answered with (a refusal, or a failure sent as a status or in the stream). */
  error?: AnsweredError;
  sessionId?: string;
  /** The request reached the turn that calls the upstream. */
  upstream?: boolean;
}

const facts = new WeakMap<ServerResponse, RequestFacts>();

function factsOf(response: ServerResponse): RequestFacts {
  let found = facts.get(response);
  if (!found) facts.set(response, (found = {}));
  return found;
}

/** What the access log says of an error: its stable code and its message (the text the client was sent). */
export interface AnsweredError {
  readonly code: string;
  readonly message: string;
  /** An upstream's own error passed on: its code is the one the client saw, so the one logged. */
  readonly upstream?: { readonly code: string | null };
}

/** A model name longer than this is cut in the log (the request itself is refused elsewhere). */
const MAX_LOGGED_MODEL = 200;
/** Error messages are the gateway's own sentences, but an upstream's may be long. */
const MAX_LOGGED_MESSAGE = 500;

/** The model the client asked for. */
export function noteModel(response: ServerResponse, model: string): void {
  factsOf(response).model = model.length > MAX_LOGGED_MODEL ? `${model.slice(0, MAX_LOGGED_MODEL - 1)}…` : model;
}

/** The model a parsed body names, before it is validated: a refused request still logs which model it was for. */
export function noteRequestedModel(response: ServerResponse, body: unknown): void {
  const model = isRecord(body) ? body.model : undefined;
  if (typeof model === "string") noteModel(response, model);
}

/** The request was answered with this error: its access-log line carries the code and the message. */
export function noteError(response: ServerResponse, error: AnsweredError): void {
  factsOf(response).error = error;
}

/** The turn started: the upstream is called (its session is known once the turn has one). */
export function noteUpstream(response: ServerResponse, sessionId?: string): void {
  const found = factsOf(response);
  found.upstream = true;
  if (sessionId) found.sessionId = sessionId;
}

/** Paths whose every hit is not worth an info line (probes poll them). */
const QUIET_PATHS = new Set(["/health", "/v1/health", "/favicon.ico", "/metrics"]);
/** Sessions with a retry not yet logged; bounded, so a session whose request never logs cannot grow it. */
const MAX_PENDING_RETRIES = 1024;

/**
 * One line per request at `info`: method, path (no query string), model,
 * status, duration, session id and upstream attempts (1, or 2 after the
 * unknown-field retry, which the turn announces as
 * `verdict.recorded`); a request answered with an error adds its
 * `error_code` and `error_message`, so the log says why it was refused.
 * Probes log at `debug`.
 */
export class AccessLog {
  private readonly retries = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    bus: EventBus,
  ) {
    bus.subscribe(
      (event) => {
        if (event.retried === false || typeof event.session_id !== "string") return;
        if (this.retries.size >= MAX_PENDING_RETRIES) this.retries.clear();
        this.retries.set(event.session_id, (this.retries.get(event.session_id) ?? 0) + 1);
      },
      ["verdict.recorded"],
      { untimed: true },
    );
  }

  write(request: IncomingMessage, response: ServerResponse, started: number): void {
    const path = (request.url ?? "/").split("?")[0];
    const quiet = QUIET_PATHS.has(path);
    if (!this.log.isLevelEnabled(quiet ? "debug" : "info")) return;
    const found = facts.get(response) ?? {};
    let attempts = 0;
    if (found.upstream) {
      attempts = 1;
      if (found.sessionId && this.retries.has(found.sessionId)) {
        attempts += this.retries.get(found.sessionId)!;
        this.retries.delete(found.sessionId);
      }
    }
    const line: Record<string, unknown> = {
      method: request.method,
      path,
      model: found.model ?? null,
      status: response.statusCode,
      duration_ms: Math.round(performance.now() - started),
      session_id: found.sessionId ?? null,
      upstream_attempts: attempts,
    };
    if (found.error) {
      line.error_code = found.error.upstream?.code ?? found.error.code;
      const { message } = found.error;
      line.error_message = message.length > MAX_LOGGED_MESSAGE ? `${message.slice(0, MAX_LOGGED_MESSAGE - 1)}…` : message;
    }
    if (quiet) this.log.debug(line, "request");
    else this.log.info(line, "request");
  }
}
