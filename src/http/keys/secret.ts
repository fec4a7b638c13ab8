import { hash, randomBytes } from "node:crypto";

/** The prefix of every access key's secret: a leaked one is recognisable (secret scanners, logs). */
export const SECRET_PREFIX = "ck_";

/**
 * A new secret: 32 random bytes (256 bits). Only its SHA-256 is stored. A
 * slow password hash (bcrypt, scrypt, Argon2) protects guessable passwords
 * from a stolen database; a 256-bit random secret cannot be guessed however
 * fast the hash, so one SHA-256 is as safe and costs a microsecond per
 * request instead of tens of milliseconds.
 */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function secretDigest(secret: string): Buffer {
  return hash("sha256", secret, "buffer");
}

export function secretHash(secret: string): string {
  return secretDigest(secret).toString("hex");
}

/** A new key's data scope: random, so a later key given the name of a revoked one sees nothing of it. */
export function newDataScope(): string {
  return randomBytes(16).toString("base64url");
}
