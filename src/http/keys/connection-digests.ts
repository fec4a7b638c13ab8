import { timingSafeEqual } from "node:crypto";
import { secretDigest } from "./secret.js";

/** A presented token and its SHA-256 in hex (the key map's), and whether it is the owner key's (compared in constant time). */
export interface PresentedDigest {
  readonly token: string;
  readonly hex: string;
  readonly owner: boolean;
}

/**
 * Connection digests (docs/performance.md#the-requests-edges): the SHA-256
 * of the token a connection presented last,
 * kept for that connection's next request. A keep-alive client sends the
 * same key on every request, and the one-shot SHA-256 of it cost 5–15 µs a
 * request inside the gateway (its code is cold by the time a request
 * reaches it), against well under 1 µs for this comparison. Only the digest
 * is remembered, with whether it is the owner key's (which never changes):
 * an access key is still judged on every request from the ring as it is
 * then, so a revoked, rotated or expired key is refused exactly as without
 * it.
 *
 * The token is compared with the one the same connection sent before, in
 * time that depends on the presented token's length only: a proxy that
 * reuses one connection for several clients learns nothing of another
 * client's key, as with the hashed comparison. One entry per connection,
 * released with it.
 */
export class ConnectionDigests {
  private readonly last = new WeakMap<object, PresentedDigest>();

  constructor(private readonly ownerDigest: Buffer) {}

  /** The token's digest; reused when `connection` presented this token last, computed otherwise. */
  of(token: string, connection: object | undefined): PresentedDigest {
    if (connection === undefined) return this.digestOf(token);
    const remembered = this.last.get(connection);
    if (remembered !== undefined && sameToken(token, remembered.token)) return remembered;
    const presented = this.digestOf(token);
    this.last.set(connection, presented);
    return presented;
  }

  private digestOf(token: string): PresentedDigest {
    const digest = secretDigest(token);
    return { token, hex: digest.toString("hex"), owner: timingSafeEqual(digest, this.ownerDigest) };
  }
}

/**
 * Equality without an early exit: every character of `presented` is
 * compared, and a length that differs only sets a bit, so the time depends
 * on the presented token's length, never on where `earlier` differs or how
 * long it is.
 */
export function sameToken(presented: string, earlier: string): boolean {
  let difference = presented.length ^ earlier.length;
  for (let i = 0; i < presented.length; i++) difference |= presented.charCodeAt(i) ^ (earlier.charCodeAt(i) | 0);
  return difference === 0;
}
