import { KeyExistsError, type KeyChange, type KeyUse, type NewKey, type StoredKey } from "../keys.js";
import { toStoredKey, type KeyRow } from "../rows.js";
import type { KeyStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { run, transaction } from "./run.js";

const REVISION = `SELECT revision FROM key_revision WHERE id = 1`;
const BUMP = `UPDATE key_revision SET revision = revision + 1 WHERE id = 1`;
const ALL = `SELECT * FROM access_keys ORDER BY created_at, name`;
const BY_SECRET_HASHES = `SELECT * FROM access_keys WHERE secret_hash = ANY($1::text[])`;
const INSERT = `
  INSERT INTO access_keys (name, secret_hash, data_scope, scopes, models, events_of, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
const REVOKE = `UPDATE access_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL`;
const ROTATE = `UPDATE access_keys SET secret_hash = $1, rotated_at = $2 WHERE name = $3 AND revoked_at IS NULL`;
const USE = `UPDATE access_keys SET requests = requests + $1, last_used_at = GREATEST(COALESCE(last_used_at, 0), $2) WHERE name = $3`;
/** PostgreSQL's unique_violation: the name is taken. */
const UNIQUE_VIOLATION = "23505";

/**
 * Access keys in PostgreSQL. Every create, revoke and rotate bumps the one
 * revision row in its own transaction; each gateway polls that row, so a
 * change made through any instance is in force on all of them within a poll.
 */
export class PgKeys implements KeyStorage {
  constructor(private readonly sql: Sql) {}

  async revision(): Promise<number> {
    const [row] = await run<{ revision: string }>(this.sql, REVISION);
    return Number(row?.revision ?? 0);
  }

  async list(secretHashes?: readonly string[]): Promise<StoredKey[]> {
    if (secretHashes === undefined) return (await run<KeyRow>(this.sql, ALL)).map(toStoredKey);
    if (secretHashes.length === 0) return [];
    return (await run<KeyRow>(this.sql, BY_SECRET_HASHES, [secretHashes])).map(toStoredKey);
  }

  async create(key: NewKey): Promise<StoredKey> {
    try {
      await transaction(this.sql, async (tx) => {
        await run(tx, INSERT, [
          key.name,
          key.secretHash,
          key.dataScope,
          JSON.stringify(key.scopes),
          JSON.stringify(key.models),
          JSON.stringify(key.eventsOf),
          key.createdAt,
          key.expiresAt,
        ]);
        await run(tx, BUMP);
      });
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION && (error as { constraint?: string }).constraint === "access_keys_pkey")
        throw new KeyExistsError(key.name);
      throw error;
    }
    return { ...key, revokedAt: null, rotatedAt: null, lastUsedAt: null, requests: 0 };
  }

  update(name: string, change: KeyChange): Promise<boolean> {
    return change === "revoke" ? this.changing(REVOKE, [Date.now(), name]) : this.changing(ROTATE, [change.secretHash, Date.now(), name]);
  }

  async recordUse(uses: readonly KeyUse[]): Promise<void> {
    if (uses.length === 0) return;
    await transaction(this.sql, async (tx) => {
      for (const use of uses) await run(tx, USE, [use.requests, use.lastUsedAt, use.name]);
    });
  }

  /** A write that bumps the revision when it changed a row, in one transaction. */
  private changing(statement: string, values: readonly unknown[]): Promise<boolean> {
    return transaction(this.sql, async (tx) => {
      const changed = (await run(tx, statement, values)).count > 0;
      if (changed) await run(tx, BUMP);
      return changed;
    });
  }
}
