import type { Statement } from "better-sqlite3";
import { KeyExistsError, type KeyChange, type KeyList, type KeyQuery, type KeyUse, type NewKey } from "../keys.js";
import { toStoredKey, type KeyRow } from "../rows.js";
import type { KeyStorage } from "../storage.js";
import type { Db } from "./database.js";

/** Access keys in state.db (tables from key-migrations.ts); every write that changes who may do what bumps the revision. */
export class KeyStore implements KeyStorage {
  private readonly statements: {
    revision: Statement<[]>;
    bump: Statement<[]>;
    all: Statement<[]>;
    bySecretHashes: Statement<[string]>;
    insert: Statement<[Record<string, unknown>]>;
    revoke: Statement<[number, string]>;
    rotate: Statement<[string, number, string]>;
    use: Statement<[number, number, string]>;
  };
  private readonly recordMany: (uses: readonly KeyUse[]) => void;

  constructor(private readonly db: Db) {
    this.statements = {
      revision: db.prepare("SELECT revision FROM key_revision WHERE id = 1"),
      bump: db.prepare("UPDATE key_revision SET revision = revision + 1 WHERE id = 1"),
      all: db.prepare("SELECT * FROM access_keys ORDER BY created_at, name"),
      // one statement for any number of hashes, each found through the UNIQUE index on secret_hash
      bySecretHashes: db.prepare("SELECT * FROM access_keys WHERE secret_hash IN (SELECT value FROM json_each(?))"),
      insert: db.prepare(
        `INSERT INTO access_keys (name, secret_hash, data_scope, scopes, models, events_of, created_at, expires_at)
         VALUES (@name, @secretHash, @dataScope, @scopes, @models, @eventsOf, @createdAt, @expiresAt)`,
      ),
      revoke: db.prepare("UPDATE access_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"),
      rotate: db.prepare("UPDATE access_keys SET secret_hash = ?, rotated_at = ? WHERE name = ? AND revoked_at IS NULL"),
      use: db.prepare("UPDATE access_keys SET requests = requests + ?, last_used_at = max(coalesce(last_used_at, 0), ?) WHERE name = ?"),
    };
    this.recordMany = db.transaction((uses: readonly KeyUse[]) => {
      for (const use of uses) this.statements.use.run(use.requests, use.lastUsedAt, use.name);
    });
  }

  /** One snapshot: better-sqlite3 reads synchronously, nothing is written between the revision and the keys. */
  async list(query: KeyQuery = {}): Promise<KeyList> {
    const { revision } = this.statements.revision.get() as { revision: number };
    if (revision === query.unchangedSince) return { revision, keys: undefined };
    const hashes = query.secretHashes;
    if (hashes === undefined) return { revision, keys: (this.statements.all.all() as KeyRow[]).map(toStoredKey) };
    if (hashes.length === 0) return { revision, keys: [] };
    return { revision, keys: (this.statements.bySecretHashes.all(JSON.stringify(hashes)) as KeyRow[]).map(toStoredKey) };
  }

  async update(change: KeyChange): Promise<boolean> {
    if ("create" in change) return this.create(change.create);
    const now = Date.now();
    const write =
      "revoke" in change ? () => this.statements.revoke.run(now, change.revoke) : () => this.statements.rotate.run(change.secretHash, now, change.rotate);
    return this.changing(() => write().changes > 0);
  }

  async recordUse(uses: readonly KeyUse[]): Promise<void> {
    if (uses.length > 0) this.recordMany(uses);
  }

  private create(key: NewKey): boolean {
    return this.db.transaction(() => {
      try {
        this.statements.insert.run({ ...key, scopes: JSON.stringify(key.scopes), models: JSON.stringify(key.models), eventsOf: JSON.stringify(key.eventsOf) });
      } catch (error) {
        if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw new KeyExistsError(key.name);
        throw error;
      }
      this.statements.bump.run();
      return true;
    })();
  }

  /** A write that bumps the revision when it changed a row, in one transaction. */
  private changing(write: () => boolean): boolean {
    return this.db.transaction(() => {
      const changed = write();
      if (changed) this.statements.bump.run();
      return changed;
    })();
  }
}
