import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { SessionQuery } from "../../storage/sessions.js";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const MAX_TEXT = 200;
const MAX_FILTER = 256;

/** `GET /v1/sessions`'s parameters (docs/api.md#get-v1sessions) as a storage query; a bad one is a 400 naming it. */
export function parseListQuery(params: URLSearchParams, keyHash: string | undefined): SessionQuery {
  return {
    keyHash,
    limit: parseLimit(params.get("limit")),
    after: parseCursor(params.get("cursor")),
    model: filter(params, "model", MAX_FILTER),
    provider: filter(params, "provider", MAX_FILTER),
    text: filter(params, "q", MAX_TEXT),
    since: moment(params.get("since"), "since"),
    until: moment(params.get("until"), "until"),
  };
}

function parseLimit(value: string | null): number {
  if (value === null) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw invalid(`limit must be an integer from 1 to ${MAX_LIMIT}, got '${shorten(value)}'`, "limit");
  return limit;
}

function filter(params: URLSearchParams, name: string, max: number): string | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  if (value.length === 0 || value.length > max) throw invalid(`${name} must be 1 to ${max} characters`, name);
  return value;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * ISO 8601 (a date, or a date and time; without an offset, UTC) or epoch
 * milliseconds, as the ISO string the store compares its times with.
 */
export function moment(value: string | null, name: string): string | undefined {
  if (value === null) return undefined;
  let millis = NaN;
  if (/^\d{1,15}$/.test(value)) millis = Number(value);
  else if (ISO_DATE.test(value)) millis = Date.parse(`${value}T00:00:00Z`);
  else if (ISO_DATE_TIME.test(value)) millis = Date.parse(/(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}Z`);
  if (!Number.isFinite(millis) || millis > MAX_MILLIS) {
    throw invalid(`${name} must be an ISO 8601 date or time (2026-12-03, 2026-12-03T13:00:00Z) or epoch milliseconds, got '${shorten(value)}'`, name);
  }
  return new Date(millis).toISOString();
}

/** The year 9999's end: past it an ISO string has more than four year digits and no longer sorts as text. */
const MAX_MILLIS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The cursor of the page after the one ending with this session: opaque to clients, its last activity and id. */
export function cursorAfter(updatedAt: string, id: string): string {
  return Buffer.from(`${updatedAt}|${id}`).toString("base64url");
}

function parseCursor(value: string | null): SessionQuery["after"] {
  if (value === null) return undefined;
  const decoded = /^[A-Za-z0-9_-]{1,1024}$/.test(value) ? Buffer.from(value, "base64url").toString() : "";
  const bar = decoded.indexOf("|");
  const updatedAt = decoded.slice(0, bar);
  const id = decoded.slice(bar + 1);
  if (bar < 0 || !/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(updatedAt) || id.length === 0) {
    throw invalid("cursor is not one this gateway handed out: pass next_cursor from the previous page as it is", "cursor");
  }
  return { updatedAt, id };
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, param);
}

function shorten(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
