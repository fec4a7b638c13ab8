import { KeyExistsError, type KeyChange, type KeyList, type KeyQuery, type KeyUse, type NewKey } from "../keys.js";
import { toStoredKey, type KeyRow } from "../rows.js";
import type { KeyStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { run, transaction } from "./run.js";

const BUMP = `UPDATE key_revision SET revision = revision + 1 WHERE id = 1`;
// the revision and the keys in one statement, one snapshot: one row per key, each with the revision, or one row of the
// revision alone (its key columns NULL) when the caller holds it already ($1) or no key is there. OFFSET 0 keeps the
// keys' read a subquery of its own, whose test of the revision is a one-time filter: an unchanged poll reads no key
// (flattened into the join, the test became a join filter over every key). The keys are read by an index (the name's,
// or the secret hash's): a sequential scan, priced out on our connections (connection.ts), would price the whole
// statement past jit_above_cost, and every poll would be compiled first (300 ms)
const keysSince = (where: string) => `
  SELECT r.revision, k.* FROM key_revision r
  LEFT JOIN LATERAL (SELECT * FROM access_keys WHERE r.revision IS DISTINCT FROM $1::bigint${where} ORDER BY name OFFSET 0) k ON true
  WHERE r.id = 1 ORDER BY k.created_at, k.name`;
const ALL = keysSince("");
const BY_SECRET_HASHES = keysSince(" AND secret_hash = ANY($2::text[])");
const INSERT = `
  INSERT INTO access_keys (name, secret_hash, data_scope, scopes, models, events_of, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
const REVOKE = `UPDATE access_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL`;
const ROTATE = `UPDATE access_keys SET secret_hash = $1, rotated_at = $2 WHERE name = $3 AND revoked_at IS NULL`;
const USE = `UPDATE access_keys SET requests = requests + $1, last_used_at = GREATEST(COALESCE(last_used_at, 0), $2) WHERE name = $3`;
/** A row of ALL or BY_SECRET_HASHES: a key's columns (NULL on the revision's own row), with the revision (bigint, as text). */
type RevisionRow = KeyRow & { readonly revision: string };
/** PostgreSQL's unique_violation: the name is taken. */
const UNIQUE_VIOLATION = "23505";

/**
 * Access keys in PostgreSQL. Every create, revoke and rotate bumps the one
 * revision row in its own transaction; each gateway polls that row, so a
 * change made through any instance is in force on all of them within a poll.
 */
export class PgKeys implements KeyStorage {
  constructor(private readonly sql: Sql) {}

  async list(query: KeyQuery = {}): Promise<KeyList> {
    const hashes = query.secretHashes;
    const since = query.unchangedSince ?? null;
    const rows = hashes ? await run<RevisionRow>(this.sql, BY_SECRET_HASHES, [since, hashes]) : await run<RevisionRow>(this.sql, ALL, [since]);
    const revision = Number(rows[0]?.revision ?? 0);
    if (revision === query.unchangedSince) return { revision, keys: undefined };
    return { revision, keys: rows.flatMap((row) => (row.name === null ? [] : [toStoredKey(row)])) };
  }

  update(change: KeyChange): Promise<boolean> {
    if ("create" in change) return this.create(change.create);
    return "revoke" in change ? this.changing(REVOKE, [Date.now(), change.revoke]) : this.changing(ROTATE, [change.secretHash, Date.now(), change.rotate]);
  }

  private async create(key: NewKey): Promise<boolean> {
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
    return true;
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
