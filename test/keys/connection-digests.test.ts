import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ConnectionDigests, sameToken } from "../../src/http/keys/connection-digests.js";
import { KeyRing } from "../../src/http/keys/key-ring.js";
import { newDataScope, newSecret, secretDigest, secretHash } from "../../src/http/keys/secret.js";
import { silentLogger } from "../../src/foundation/logging/logger.js";
import { openStorage } from "../../src/storage/open/open-storage.js";
import type { Storage } from "../../src/storage/storage.js";

/**
 * A connection's remembered digest (ConnectionDigests) only saves the hash:
 * every request is still judged from the ring as it is then, and a token
 * other than the one remembered is hashed anew.
 */
const OWNER = "owner-key-0123456789";
let home: string;
let storage: Storage;
let ring: KeyRing;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "carrierd-connection-digests-"));
  storage = await openStorage(undefined, { home });
  ring = new KeyRing(storage.keys, OWNER, silentLogger(), { pollMs: 60_000, flushMs: 60_000 });
  await ring.start();
});
afterAll(async () => {
  await ring?.close();
  await storage?.close();
  rmSync(home, { recursive: true, force: true });
});

async function addKey(name: string): Promise<string> {
  const secret = newSecret();
  const at = Date.now();
  await storage.keys.create({
    name,
    secretHash: secretHash(secret),
    dataScope: newDataScope(),
    scopes: ["chat"],
    models: [],
    eventsOf: [],
    createdAt: at,
    expiresAt: null,
  });
  await ring.refresh();
  return secret;
}

const nameOf = (identified: ReturnType<KeyRing["identify"]>) => (identified.ok ? identified.caller.name : identified.reason);

test("a token after another on the same connection is judged as itself", async () => {
  const secret = await addKey("client");
  const connection = {};
  expect(nameOf(ring.identify(OWNER, Date.now(), connection))).toBe("owner");
  expect(nameOf(ring.identify(secret, Date.now(), connection))).toBe("client");
  expect(nameOf(ring.identify(`${secret}x`, Date.now(), connection))).toBe("unknown");
  expect(nameOf(ring.identify(secret.slice(0, -1), Date.now(), connection))).toBe("unknown");
  expect(nameOf(ring.identify(OWNER.slice(0, -1), Date.now(), connection))).toBe("unknown");
  expect(nameOf(ring.identify(OWNER, Date.now(), connection))).toBe("owner");
});

test("a key revoked or rotated between two requests of one connection is refused on the second", async () => {
  const revoked = await addKey("revoked-between");
  const rotated = await addKey("rotated-between");
  const connection = {};
  const other = {};
  expect(nameOf(ring.identify(revoked, Date.now(), connection))).toBe("revoked-between");
  expect(nameOf(ring.identify(rotated, Date.now(), other))).toBe("rotated-between");
  await storage.keys.update("revoked-between", "revoke");
  await storage.keys.update("rotated-between", { secretHash: secretHash(newSecret()) });
  await ring.refresh();
  expect(nameOf(ring.identify(revoked, Date.now(), connection))).toBe("revoked");
  expect(nameOf(ring.identify(rotated, Date.now(), other))).toBe("unknown");
});

test("the remembered digest is the token's, and is reused only for that token", () => {
  const digests = new ConnectionDigests(secretDigest("Bearer-token-two"));
  const connection = {};
  const first = digests.of("Bearer-token-one", connection);
  expect(first).toEqual({ token: "Bearer-token-one", hex: secretHash("Bearer-token-one"), owner: false });
  // a fresh string with the same characters (each request's header is a new string) is the same token
  expect(digests.of(["Bearer", "token", "one"].join("-"), connection)).toBe(first);
  const second = digests.of("Bearer-token-two", connection);
  expect(second).not.toBe(first);
  expect(second).toEqual({ token: "Bearer-token-two", hex: secretHash("Bearer-token-two"), owner: true });
  // without a connection nothing is remembered
  expect(digests.of("Bearer-token-two", undefined)).not.toBe(second);
});

test("sameToken: equal only for the same characters, whatever the lengths", () => {
  expect(sameToken("abc", "abc")).toBe(true);
  expect(sameToken("abc", "abd")).toBe(false);
  expect(sameToken("abc", "ab")).toBe(false);
  expect(sameToken("ab", "abc")).toBe(false);
  expect(sameToken("", "a")).toBe(false);
  expect(sameToken("a\u0000", "a")).toBe(false);
  expect(sameToken("a", "a\u0000")).toBe(false);
  expect(sameToken("é", "e")).toBe(false);
  expect(sameToken("", "")).toBe(true);
});
