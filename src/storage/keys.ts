/** What an access key may open (docs/operators.md, "Access keys"). */
export type KeyScope = "chat" | "events" | "admin";

export const KEY_SCOPES: readonly KeyScope[] = ["chat", "events", "admin"];

/** An access key as the store keeps it: never the secret, only its hash. */
export interface StoredKey {
  /** The operator's name for it, unique; metrics and `keys list` show this, never the secret. */
  readonly name: string;
  /** SHA-256 of the secret, hex. */
  readonly secretHash: string;
  /**
   * The scope its sessions, responses and conversations are filed under.
   * Random at creation and kept by a rotation, so a rotated key still sees
   * its own; a new key of an old name does not.
   */
  readonly dataScope: string;
  readonly scopes: readonly KeyScope[];
  /** Model globs it may call (`*` matches any run of characters); empty: every model. */
  readonly models: readonly string[];
  /** Names of the keys whose events it sees; empty: its own. */
  readonly eventsOf: readonly string[];
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly rotatedAt: number | null;
  readonly lastUsedAt: number | null;
  /** Requests it made, as last flushed by a gateway. */
  readonly requests: number;
}

export type NewKey = Omit<StoredKey, "revokedAt" | "rotatedAt" | "lastUsedAt" | "requests">;

/**
 * An operator's change to the keys (KeyStorage.update): a new key, the
 * revocation of a live one, or a new secret for a live one (a rotation,
 * keeping name, scopes and data scope). Each moves the revision.
 */
export type KeyChange = { readonly create: NewKey } | { readonly revoke: string } | { readonly rotate: string; readonly secretHash: string };

/** Which keys KeyStorage.list reads. */
export interface KeyQuery {
  /** The revision the caller holds: while it is still the store's, no key is read. */
  readonly unchangedSince?: number;
  /** Only the keys of these secret hashes (one indexed read: hashes of no key are absent, and none asked is none answered). */
  readonly secretHashes?: readonly string[];
}

/** KeyStorage.list's answer. */
export interface KeyList {
  /** Changes whenever a key is created, revoked or rotated; not on usage. */
  readonly revision: number;
  /** Every key (or those of the hashes asked), revoked and expired ones included, oldest first; undefined when the revision is `unchangedSince`. */
  readonly keys: StoredKey[] | undefined;
}

/** Requests one gateway saw of one key since its last flush. */
export interface KeyUse {
  readonly name: string;
  readonly requests: number;
  readonly lastUsedAt: number;
}

/** A key of that name exists already (revoked keys keep their name, so an old secret never comes back to life under it). */
export class KeyExistsError extends Error {
  constructor(readonly keyName: string) {
    super(`a key named "${keyName}" exists already (revoked keys keep their name): choose another name, or rotate it`);
    this.name = "KeyExistsError";
  }
}
