import { randomBytes } from "node:crypto";
import { GatewayError } from "../errors/gateway-error.js";

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** SPEC §12.11: `[A-Za-z0-9._:-]{1,128}`, anything else is a 400. */
export function checkSessionId(value: string): string {
  if (!SESSION_ID.test(value)) throw new GatewayError("invalid_session_id", "X-Session-Id must match [A-Za-z0-9._:-]{1,128}", "X-Session-Id");
  return value;
}

export function newId(prefix: string, bytes = 12): string {
  return `${prefix}${randomBytes(bytes).toString("hex")}`;
}
