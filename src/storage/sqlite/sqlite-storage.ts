import type { CarrierField, ChatMessage, JsonObject } from "../../providers/contract.js";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "../checkpoints.js";
import type { ResponseRecord, StoredConversation, StoredItem, StoredResponse } from "../responses.js";
import type { KeyUse, NewKey, StoredKey } from "../keys.js";
import type {
  CheckpointStorage,
  EnvelopeKeyStorage,
  KeyStorage,
  ResponseStorage,
  SessionCatalogue,
  SessionConfigStorage,
  Storage,
  TurnInFlight,
  TurnStorage,
  VerdictStorage,
} from "../storage.js";
import type {
  BranchResult,
  DepthAsked,
  DepthMatch,
  FingerprintMatch,
  NewTurn,
  ReplaySource,
  SessionDetail,
  SessionModelConfig,
  SessionSummary,
} from "../turns.js";
import type { Verdict } from "../verdicts.js";
import type { RequestLookup, RequestLookupAnswer } from "../request-lookup.js";
import type { BackgroundCheckpoint } from "./background-checkpoint.js";
import { CheckpointStore } from "./checkpoint-store.js";
import type { Db } from "./database.js";
import { SqliteEnvelopeKeys } from "./envelope-key-store.js";
import { KeyStore } from "./key-store.js";
import { ReplayCache } from "./replay-cache.js";
import { ReplayReads } from "./replay-reads.js";
import { lookupInProcess } from "./request-lookup.js";
import { ResponseStore } from "./response-store.js";
import { SessionCatalogueSql } from "./session-catalogue.js";
import { SessionConfigSql } from "./session-config.js";
import { SqliteSessionHistory } from "./session-history.js";
import type { SessionHistory } from "../session-history.js";
import type { TurnJournal } from "./turn-journal.js";
import { TurnWrites } from "./turn-writes.js";
import { VerdictStore } from "./verdict-store.js";
import type { Logger } from "../../operations/logging/logger.js";

/**
 * The Storage port over one SQLite connection. better-sqlite3 answers
 * synchronously; each operation here is `async` only so that what it
 * returns (or throws) arrives as the port promises it, through a promise.
 * Built by openSqliteStorage; `db` and the parts are open to the backend's
 * own tests.
 */
export class SqliteStorage implements Storage {
  readonly cache: ReplayCache;
  readonly writes: TurnWrites;
  readonly reads: ReplayReads;
  readonly sessions: SessionCatalogueSql;
  readonly configs: SessionConfigSql;
  readonly verdictStore: VerdictStore;
  readonly responseStore: ResponseStore;
  readonly checkpointStore: CheckpointStore;
  readonly keyStore: KeyStore;

  readonly turns: TurnStorage;
  readonly catalogue: SessionCatalogue;
  readonly sessionConfig: SessionConfigStorage;
  readonly verdicts: VerdictStorage;
  readonly responses: ResponseStorage;
  readonly checkpoints: CheckpointStorage;
  readonly keys: KeyStorage;
  readonly envelopeKeys: EnvelopeKeyStorage;
  readonly history: SessionHistory;
  private closed = false;

  constructor(
    readonly db: Db,
    private readonly background: BackgroundCheckpoint | undefined,
    journaled?: { readonly journal: TurnJournal; readonly log: Logger },
  ) {
    this.cache = new ReplayCache(db);
    this.writes = new TurnWrites(db, this.cache, journaled);
    const settle = () => this.writes.settle();
    this.reads = new ReplayReads(db, this.cache, settle);
    this.configs = new SessionConfigSql(db, settle);
    this.checkpointStore = new CheckpointStore(db, settle);
    this.sessions = new SessionCatalogueSql(db, this.checkpointStore, settle, (id) => this.configs.forget(id));
    this.verdictStore = new VerdictStore(db);
    this.responseStore = new ResponseStore(db);
    this.turns = new SqliteTurns(this.reads, this.writes);
    this.catalogue = new SqliteCatalogue(this.sessions);
    this.sessionConfig = new SqliteSessionConfig(this.configs);
    this.verdicts = new SqliteVerdicts(this.verdictStore);
    this.responses = new SqliteResponses(this.responseStore);
    this.checkpoints = new SqliteCheckpoints(this.checkpointStore);
    this.keyStore = new KeyStore(db);
    this.keys = new SqliteKeys(this.keyStore);
    this.envelopeKeys = new SqliteEnvelopeKeys(db);
    this.history = new SqliteSessionHistory(db, settle);
  }

  async lookup(query: RequestLookup): Promise<RequestLookupAnswer> {
    return lookupInProcess(this, query);
  }

  committed(): Promise<void> {
    return this.writes.committed();
  }

  /** Stops the background checkpoints, lets go of the journal (what it holds is committed at the next start), closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.background?.stop();
    this.writes.close();
    this.db.close();
  }
}

class SqliteTurns implements TurnStorage {
  constructor(
    private readonly reads: ReplayReads,
    private readonly writes: TurnWrites,
  ) {}

  async matchesFor(keyHash: string, keys: readonly string[]): Promise<Map<string, FingerprintMatch[]>> {
    return this.reads.matchesFor(keyHash, keys);
  }

  async replaySources<K>(turnIds: ReadonlyMap<K, string>): Promise<Map<K, ReplaySource>> {
    return this.reads.replaySources(turnIds);
  }

  async turnsAtDepths(keyHash: string, sessionId: string, asked: readonly DepthAsked[]): Promise<Map<number, DepthMatch[]>> {
    return this.reads.turnsAtDepths(keyHash, sessionId, asked);
  }

  begin(): TurnInFlight {
    return this.writes.begin();
  }

  save(turn: NewTurn): Promise<void> {
    return this.writes.save(turn);
  }
}

class SqliteCatalogue implements SessionCatalogue {
  constructor(private readonly sessions: SessionCatalogueSql) {}

  async exists(sessionId: string): Promise<boolean> {
    return this.sessions.exists(sessionId);
  }

  async ensure(sessionId: string, keyHash: string, model: string | null): Promise<void> {
    this.sessions.ensure(sessionId, keyHash, model);
  }

  async list(limit: number): Promise<SessionSummary[]> {
    return this.sessions.list(limit);
  }

  async show(sessionId: string): Promise<SessionDetail | undefined> {
    return this.sessions.show(sessionId);
  }

  async branch(sourceId: string, newId: string, at: number | undefined): Promise<BranchResult | undefined> {
    return this.sessions.branch(sourceId, newId, at);
  }

  async remove(sessionId: string): Promise<boolean> {
    return this.sessions.remove(sessionId);
  }
}

class SqliteSessionConfig implements SessionConfigStorage {
  constructor(private readonly configs: SessionConfigSql) {}

  async modelConfig(sessionId: string): Promise<Readonly<SessionModelConfig>> {
    return this.configs.modelConfig(sessionId);
  }

  async patchModelConfig(sessionId: string, patch: (config: SessionModelConfig) => SessionModelConfig): Promise<void> {
    this.configs.patchModelConfig(sessionId, patch);
  }

  async removeRejections(predicate: (provider: string, host: string, model: string, field: string) => boolean): Promise<number> {
    return this.configs.removeRejections(predicate);
  }
}

class SqliteVerdicts implements VerdictStorage {
  constructor(private readonly store: VerdictStore) {}

  async fieldsFor(provider: string, host: string, model: string): Promise<readonly CarrierField[]> {
    return this.store.fieldsFor(provider, host, model);
  }

  async record(verdict: Omit<Verdict, "recorded_at">): Promise<Verdict> {
    return this.store.record(verdict);
  }

  async list(): Promise<Verdict[]> {
    return this.store.list();
  }

  async clear(predicate: (verdict: Verdict) => boolean): Promise<Verdict[]> {
    return this.store.clear(predicate);
  }
}

class SqliteResponses implements ResponseStorage {
  constructor(private readonly store: ResponseStore) {}

  save(record: ResponseRecord, items: readonly JsonObject[]): Promise<void> {
    return this.store.saveDurably(record, items);
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    return this.store.get(id);
  }

  async inputItems(id: string): Promise<JsonObject[] | undefined> {
    return this.store.inputItems(id);
  }

  async history(id: string): Promise<ChatMessage[]> {
    return this.store.history(id);
  }

  async ancestry(id: string): Promise<string[]> {
    return this.store.ancestry(id);
  }

  async delete(id: string): Promise<boolean> {
    return this.store.delete(id);
  }

  async item(id: string): Promise<StoredItem | undefined> {
    return this.store.item(id);
  }

  async conversation(id: string): Promise<StoredConversation | undefined> {
    return this.store.conversation(id);
  }
}

class SqliteCheckpoints implements CheckpointStorage {
  constructor(private readonly store: CheckpointStore) {}

  async has(sessionId: string): Promise<boolean> {
    return this.store.has(sessionId);
  }

  async forChain(chain: readonly string[]): Promise<Checkpoint | undefined> {
    return this.store.forChain(chain);
  }

  async save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint> {
    return this.store.save(checkpoint, archive);
  }

  async list(sessionId: string): Promise<Checkpoint[]> {
    return this.store.list(sessionId);
  }

  async archivedPositions(sessionId: string): Promise<Set<number>> {
    return this.store.archivedPositions(sessionId);
  }
}

class SqliteKeys implements KeyStorage {
  constructor(private readonly store: KeyStore) {}

  async revision(): Promise<number> {
    return this.store.revision();
  }

  async list(): Promise<StoredKey[]> {
    return this.store.list();
  }

  async findBySecretHashes(secretHashes: readonly string[]): Promise<StoredKey[]> {
    return this.store.findBySecretHashes(secretHashes);
  }

  async create(key: NewKey): Promise<StoredKey> {
    return this.store.create(key);
  }

  async revoke(name: string): Promise<boolean> {
    return this.store.revoke(name);
  }

  async rotate(name: string, secretHash: string): Promise<boolean> {
    return this.store.rotate(name, secretHash);
  }

  async recordUse(uses: readonly KeyUse[]): Promise<void> {
    this.store.recordUse(uses);
  }
}
