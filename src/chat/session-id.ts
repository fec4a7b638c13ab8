import { randomFillSync } from "node:crypto";
import { GatewayError } from "../errors/gateway-error.js";

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** SPEC §12.11: `[A-Za-z0-9._:-]{1,128}`, anything else is a 400. */
export function checkSessionId(value: string): string {
  if (!SESSION_ID.test(value)) throw new GatewayError("invalid_session_id", "X-Session-Id must match [A-Za-z0-9._:-]{1,128}", "X-Session-Id");
  return value;
}

/** Random bytes drawn a page at a time: one system call per ~340 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

export function newId(prefix: string, bytes = 12): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString("hex", offset, offset + bytes);
  offset += bytes;
  return `${prefix}${id}`;
}
