/**
 * Every error carrierd answers with: a stable code, an HTTP status and an
 * OpenAI error type, in one table. `toOpenAIError` is the one place they are
 * turned into the wire shape `{"error":{message,type,param,code}}`.
 */

import { redactText } from "../logging/redact.js";
import { isRecord } from "../util/json-readers.js";

/** Every code with its status and type; docs/api.md#errors lists them all (test/docs/errors.test.ts compares the two). */
export const ERROR_TABLE = {
  invalid_json: { status: 400, type: "invalid_request_error" },
  invalid_request: { status: 400, type: "invalid_request_error" },
  unsupported_encoding: { status: 400, type: "invalid_request_error" },
  invalid_session_id: { status: 400, type: "invalid_request_error" },
  invalid_api_key: { status: 401, type: "authentication_error" },
  origin_not_allowed: { status: 403, type: "permission_error" },
  // a valid access key without the scope the endpoint needs (chat, events, admin)
  insufficient_scope: { status: 403, type: "permission_error" },
  not_found: { status: 404, type: "invalid_request_error" },
  // a session id the caller's key has no session of (another key's counts as none)
  session_not_found: { status: 404, type: "invalid_request_error" },
  model_not_found: { status: 404, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
  // a plain GET of a WebSocket endpoint
  upgrade_required: { status: 426, type: "invalid_request_error" },
  request_too_large: { status: 413, type: "invalid_request_error" },
  // a session list past its key's or the gateway's bound on lists running at once (docs/operators.md#session-history-under-load)
  history_busy: { status: 429, type: "rate_limit_error" },
  // nginx's convention: the client left before the answer; nobody reads it, and it is not the gateway's failure
  client_closed_request: { status: 499, type: "invalid_request_error" },
  provider_not_configured: { status: 503, type: "server_error" },
  // the shared store (PostgreSQL) did not answer: a load balancer sends the client to another instance
  store_unavailable: { status: 503, type: "server_error" },
  // a session list that searched past its deadline: stopped, nothing read
  history_timeout: { status: 503, type: "server_error" },
  upstream_error: { status: 502, type: "upstream_error" },
  upstream_unreachable: { status: 502, type: "upstream_error" },
  // a stream that ended, broke or turned unreadable before its terminal marker: an incomplete turn, never stored
  upstream_stream_truncated: { status: 502, type: "upstream_error" },
  upstream_stream_interrupted: { status: 502, type: "upstream_error" },
  upstream_stream_corrupt: { status: 502, type: "upstream_error" },
  // a routes.yaml deadline (first_byte, idle, total) passed
  upstream_timeout: { status: 504, type: "upstream_error" },
  // a streaming client that read nothing for longer than the stall deadline: cut off, its upstream aborted
  client_stalled: { status: 408, type: "invalid_request_error" },
  internal_error: { status: 500, type: "server_error" },
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  /** Response headers the error is sent with (an upstream 429's Retry-After and rate limits). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** An OpenAI-shaped upstream's own error object, sent to OpenAI-wire clients in place of carrierd's (docs/api.md#upstream-errors). */
  readonly upstream: OpenAIErrorObject | undefined;
  /** The upstream's error body as it sent it: a carried request's client gets it unchanged (docs/api.md#carried-requests). */
  readonly upstreamBody: string | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    options?: {
      cause?: unknown;
      status?: number;
      type?: string;
      headers?: Readonly<Record<string, string>>;
      upstream?: OpenAIErrorObject;
      upstreamBody?: string;
    },
  ) {
    super(message, options);
    this.name = "GatewayError";
    this.status = options?.status ?? ERROR_TABLE[code].status;
    this.type = options?.type ?? ERROR_TABLE[code].type;
    this.headers = options?.headers;
    this.upstream = options?.upstream;
    this.upstreamBody = options?.upstreamBody;
  }
}

/** OpenAI's error object; an upstream's may carry more keys (Azure's `innererror`), passed on with it. */
export interface OpenAIErrorObject {
  message: string;
  type: string | null;
  param: string | null;
  code: string | null;
  [extra: string]: unknown;
}

export interface OpenAIErrorBody {
  error: OpenAIErrorObject;
}

export function toOpenAIError(error: GatewayError): OpenAIErrorBody {
  return { error: error.upstream ?? { message: error.message, type: error.type, param: error.param, code: error.code } };
}

/**
 * An upstream's own error, passed to the client with the upstream's status and
 * message (docs/api.md#upstream-errors), secrets masked. An OpenAI error
 * object is kept as it came for OpenAI-wire clients; any other body becomes
 * carrierd's `upstream_error`.
 */
export function upstreamError(status: number, body: string, headers?: Readonly<Record<string, string>>): GatewayError {
  // an upstream may echo the credential it was sent ("Incorrect API key provided: sk-…"): scrubbed as a log line would be
  const message = redactText(extractUpstreamMessage(body));
  const safeStatus = status >= 400 && status <= 599 ? status : 502;
  const upstream = openAIErrorObject(parseOrUndefined(body), message);
  return new GatewayError("upstream_error", message, upstream?.param ?? null, { status: safeStatus, headers, upstream, upstreamBody: body });
}

/**
 * An error the upstream reported inside its 200 stream (its `error` object,
 * or a Responses `response.failed` error): with a string `code` it is passed on as
 * an OpenAI error object (a missing `type` is carrierd's `upstream_error`);
 * without one it is carrierd's `upstream_error` naming `reported`.
 */
export function upstreamStreamError(detail: Readonly<Record<string, unknown>>, reported: string): GatewayError {
  const message = redactText(typeof detail.message === "string" ? detail.message : reported);
  const upstream =
    typeof detail.code === "string" ? openAIErrorObject({ error: { type: "upstream_error", param: null, ...detail, message } }, message) : undefined;
  if (!upstream) return new GatewayError("upstream_error", `upstream stream failed: ${redactText(reported)}`, null, { status: 502 });
  return new GatewayError("upstream_error", message, upstream.param, { status: 502, upstream });
}

/**
 * `{"error":{message,type,param,code}}` as OpenAI sends it: a string message,
 * a string (or null) `type` and `code`, `param` a string, null or absent.
 * Anthropic's (no `code`), Gemini's (a numeric `code`, no `type`) and
 * Mistral's bodies are not, and keep carrierd's wrapping.
 */
function openAIErrorObject(body: unknown, message: string): OpenAIErrorObject | undefined {
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const { type, param = null, code } = body.error;
  if (typeof body.error.message !== "string" || !isStringOrNull(type) || !isStringOrNull(param) || !isStringOrNull(code)) return undefined;
  return { ...body.error, message, type, param, code };
}

/** Absent (`undefined`) is neither: OpenAI always sends `type` and `code`. */
function isStringOrNull(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}

function parseOrUndefined(body: string): unknown {
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed;
  } catch {
    return undefined;
  }
}

function extractUpstreamMessage(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    const found = findMessage(parsed);
    if (found) return found;
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = body.trim();
  return text.length > 0 ? text.slice(0, 2000) : "upstream returned an error with no body";
}

/** Providers nest their message differently: OpenAI `error.message`, Mistral `message.detail[].msg`, Gemini `error.message`, Anthropic `error.message`. */
function findMessage(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(findMessage).filter(Boolean).join("; ") || undefined;
  if (isRecord(value)) {
    for (const key of ["error", "message", "detail", "msg"]) {
      if (key in value) {
        const found = findMessage(value[key]);
        if (found) return found;
      }
    }
  }
  return undefined;
}
