import { join } from "node:path";
import { VerdictStore } from "../verdicts/verdict-store.js";
import { openDatabase, type Db } from "./database.js";
import { STORE_MIGRATIONS } from "./migrations.js";
import { SessionStore } from "./session-store.js";

/** state.db for a CLI command: the same file the gateway writes, read and written safely beside it (WAL). */
export function openState(home: string): { db: Db; sessions: SessionStore; verdicts: VerdictStore; close(): void } {
  const db = openDatabase(join(home, "state.db"), STORE_MIGRATIONS);
  return { db, sessions: new SessionStore(db), verdicts: new VerdictStore(db), close: () => db.close() };
}
