import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type Db = Database.Database;

/** One schema step. Migrations are applied in `version` order, each once, in a transaction. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /**
   * The SQL, or a function that writes it from the database as it stands
   * (inside the migration's transaction): a table rebuild must carry over
   * the columns other capabilities' migrations added, which may or may not
   * have run yet.
   */
  readonly sql: string | ((db: Db) => string);
  /**
   * Run with foreign keys off, and check them before the commit, as
   * SQLite's table rebuild asks (https://www.sqlite.org/lang_altertable.html#otheralter):
   * with them on, dropping the old table deletes its rows first and fires
   * their ON DELETE actions. The pragma does nothing inside a transaction,
   * so it is set around it.
   */
  readonly foreignKeysOff?: boolean;
}

/**
 * Creates the database file 0600 before SQLite does (it would make it 0644
 * less the umask): SQLite gives the `-wal`, `-shm` and `-journal` files it
 * creates beside it the database file's own mode, so all of them hold the
 * stored reasoning privately. An existing file is tightened too, when it
 * can be (a file of another owner is left; the gateway warns at start).
 */
function createPrivate(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, "a", 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      chmodSync(path, 0o600);
    } catch {
      // not there, or not ours
    }
  }
}

/**
 * Opens `$CARRIERD_HOME/state.db` in WAL mode (so CLI commands read while the
 * gateway writes) and applies pending migrations. Each capability keeps its
 * migrations beside its own code and passes them in here.
 */
export function openDatabase(file: string, migrations: readonly Migration[]): Db {
  if (file !== ":memory:") createPrivate(file);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL"); // WAL + NORMAL: a committed turn survives a process crash
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  const applied = new Set((db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map((row) => row.version));
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  const pending = [...migrations].sort((a, b) => a.version - b.version).filter((migration) => !applied.has(migration.version));
  for (const migration of pending) {
    if (migration.foreignKeysOff) db.pragma("foreign_keys = OFF");
    try {
      db.transaction(() => {
        db.exec(typeof migration.sql === "string" ? migration.sql : migration.sql(db));
        if (migration.foreignKeysOff) {
          const broken = db.pragma("foreign_key_check") as { table: string; rowid: number; parent: string }[];
          if (broken.length > 0) {
            const first = broken[0];
            throw new Error(
              `migration ${migration.version} (${migration.name}) broke ${broken.length} foreign key(s), first: ${first.table} rowid ${first.rowid} → ${first.parent}`,
            );
          }
        }
        record.run(migration.version, migration.name, new Date().toISOString());
      })();
    } finally {
      if (migration.foreignKeysOff) db.pragma("foreign_keys = ON");
    }
  }
  keepStatistics(db);
  return db;
}

/**
 * The planner's statistics, as SQLite advises for a connection that stays
 * open (https://www.sqlite.org/pragma.html#pragma_optimize): at open,
 * `optimize` with 0x10000 analyses the tables that need it, with
 * `analysis_limit` bounding each ANALYZE to a sample of every index, so a
 * store of millions of turns is analysed in milliseconds. The gateway runs
 * it again periodically (BackgroundCheckpoint). The request path's plans
 * do not depend on it: every statement there names or shapes its way onto
 * the index that bounds it (test/storage/sqlite-plans.test.ts); the
 * statistics serve everything else.
 */
export function keepStatistics(db: Db): void {
  db.pragma(`analysis_limit = ${ANALYSIS_LIMIT}`);
  db.pragma("optimize = 0x10002");
}

/** Rows ANALYZE samples per index: enough for the planner's estimates, milliseconds on any store. */
export const ANALYSIS_LIMIT = 400;
