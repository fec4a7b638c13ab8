import { randomFillSync } from "node:crypto";
import { GatewayError } from "../../foundation/errors/gateway-error.js";

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A session id matches `[A-Za-z0-9._:-]{1,128}`; anything else is a 400 (docs/api.md#sessions-x-session-id). */
export function checkSessionId(value: string): string {
  if (!SESSION_ID.test(value)) throw new GatewayError("invalid_session_id", "X-Session-Id must match [A-Za-z0-9._:-]{1,128}", "X-Session-Id");
  return value;
}

/** Random bytes drawn a page at a time: one system call per ~680 ids instead of one per id. */
const RANDOM_BYTES = 6;
const pool = Buffer.alloc(4096);
let offset = pool.length;

/**
 * `prefix` + 12 hex digits of the millisecond clock + 12 random hex digits.
 * Time first, so ids of turns and sessions created together sort together:
 * their inserts into SQLite's id indexes land on the same few pages, where
 * random ids dirtied a page each (a group commit of 20 turns wrote ~4× the
 * pages). 48 random bits per millisecond keep them unique.
 */
export function newId(prefix: string): string {
  if (offset + RANDOM_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const random = pool.toString("hex", offset, offset + RANDOM_BYTES);
  offset += RANDOM_BYTES;
  return `${prefix}${Date.now().toString(16).padStart(12, "0")}${random}`;
}
