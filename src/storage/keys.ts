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

/** What KeyStorage.update does to a live key: revokes it, or gives it a new secret (a rotation). */
export type KeyChange = "revoke" | { readonly secretHash: string };

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
