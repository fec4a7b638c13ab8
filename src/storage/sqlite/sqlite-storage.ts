import type { Storage, TurnStorage } from "../storage.js";
import type { BackgroundCheckpoint } from "./background-checkpoint.js";
import { CheckpointStore } from "./checkpoint-store.js";
import type { Db } from "./database.js";
import { SqliteEnvelopeKeys } from "./envelope-key-store.js";
import { KeyStore } from "./key-store.js";
import { ReplayCache } from "./replay-cache.js";
import { ReplayReads } from "./replay-reads.js";
import { lookupInProcess } from "./request-lookup.js";
import { ResponseStore } from "./response-store.js";
import { SessionConfigSql } from "./session-config.js";
import { SessionStore } from "./session-store.js";
import { TurnWrites } from "./turn-writes.js";
import { VerdictStore } from "./verdict-store.js";
import type { JournaledTurns } from "./durable-turns.js";

/**
 * The Storage port over one SQLite connection: each part implements its
 * sub-port itself. better-sqlite3 answers synchronously; the parts keep
 * synchronous reads of their own where the backend composes them (the
 * request's lookup, TurnStorage's reads), and answer the port through
 * promises. Built by openSqliteStorage; `db` and the parts are open to the
 * backend's own tests.
 */
export class SqliteStorage implements Storage {
  readonly cache: ReplayCache;
  readonly writes: TurnWrites;
  readonly reads: ReplayReads;
  readonly configs: SessionConfigSql;
  readonly turns: TurnStorage;
  readonly sessions: SessionStore;
  readonly verdicts: VerdictStore;
  readonly responses: ResponseStore;
  readonly checkpoints: CheckpointStore;
  readonly keys: KeyStore;
  readonly envelopeKeys: SqliteEnvelopeKeys;
  private closed = false;

  constructor(
    readonly db: Db,
    private readonly background: BackgroundCheckpoint | undefined,
    journaled?: JournaledTurns,
  ) {
    this.cache = new ReplayCache(db);
    this.writes = new TurnWrites(db, this.cache, journaled);
    const settle = () => this.writes.settle();
    this.reads = new ReplayReads(db, this.cache, settle);
    this.configs = new SessionConfigSql(db, settle);
    this.responses = new ResponseStore(db, (sessionId, parentId) => this.checkpoints.inForce(sessionId, parentId));
    this.checkpoints = new CheckpointStore(db, settle, (id) => this.responses.ancestry(id));
    this.sessions = new SessionStore(db, this.checkpoints, settle, (id) => this.configs.forget(id));
    this.verdicts = new VerdictStore(db, this.configs);
    this.keys = new KeyStore(db);
    this.envelopeKeys = new SqliteEnvelopeKeys(db);
    const { reads, writes } = this;
    this.turns = {
      lookup: async (query) => {
        const answer = lookupInProcess({ reads, verdicts: this.verdicts, configs: this.configs }, query);
        if (query.request) writes.goingUpstream(); // the request's upstream call follows its read
        return answer;
      },
      save: (turn) => writes.save(turn),
    };
  }

  /**
   * Resolves once every turn made durable so far is where another process
   * reads it: a turn that completed alone is durable in the journal before
   * it is committed. Not a port operation (PostgreSQL commits every write
   * before it resolves): the backend's own tests and benches wait on it.
   */
  committed(): Promise<void> {
    return this.writes.committed();
  }

  /** Stops the background checkpoints, lets go of the journal (what it holds is committed at the next start), closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.background?.stop();
    await this.sessions.close();
    this.writes.close();
    this.db.close();
  }
}
