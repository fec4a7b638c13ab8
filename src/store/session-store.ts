import type { Statement } from "better-sqlite3";
import { inject, injectable } from "tsyringe";
import { DATABASE } from "../container/tokens.js";
import type { ChatMessage, Json, JsonObject, ToolCall, Usage } from "../plugins/contract.js";
import type { Db } from "./database.js";
import { foreignWrites, ReadCache } from "./foreign-writes.js";
import { MATCHES_PER_FINGERPRINT, ReplayCache, type FingerprintMatch } from "./replay-cache.js";
import type { NewTurn, ReplaySource, SessionSummary, StoredTurn } from "./stored-turn.js";
import { detached } from "../util/detached.js";
import { DurableTurns, type TurnWriter } from "./durable-turns.js";
import type { JournaledTurn, TurnJournal } from "./turn-journal.js";
import type { Logger } from "../logging/logger.js";
import { CALL_KEY_PREFIX, callKeyOf } from "../sessions/fingerprint.js";

/** A session's model config: verdicts recorded while it ran, so `--resume` keeps them. */
export interface SessionModelConfig {
  /** `[provider, host, model, fields]` */
  rejected_carriers?: [string, string, string, string[]][];
  [key: string]: unknown;
}

interface TurnRow {
  seq: number;
  id: string;
  session_id: string;
  position: number;
  parent_turn_id: string | null;
  model: string;
  plugin: string;
  provider: string;
  host: string;
  upstream_model: string;
  prompt: string;
  content: string;
  tool_calls: string | null;
  reasoning_text: string | null;
  reasoning_details: string | null;
  native_record: string | null;
  usage: string | null;
  finish_reason: string | null;
  upstream_id: string | null;
  created_at: string;
}

type ReplayRow = Pick<TurnRow, "id" | "session_id" | "plugin" | "upstream_model" | "reasoning_text" | "reasoning_details" | "native_record">;

/**
 * The session store: sessions, and their turns with every carrier verbatim
 * and the fingerprint stateless clients are matched through. All access
 * goes through prepared statements; better-sqlite3 is synchronous, so a turn
 * is durable when `saveTurn` returns.
 */
@injectable()
export class SessionStore {
  private readonly statements: {
    keyMatchesMany: Statement<[{ fingerprints: string; callKeys: string; keyHash: string }]>; // the two kinds of key as JSON arrays
    replaySources: Statement<[string]>;
    turnsAtPositions: Statement<[string, string]>;
    sessionExists: Statement<[string]>;
    turnExists: Statement<[string]>;
    insertSession: Statement<unknown[]>;
    insertTurn: Statement<unknown[]>;
    modelConfig: Statement<[string]>;
    setModelConfig: Statement<[string, string]>;
    listSessions: Statement<[number]>;
    sessionRow: Statement<[string]>;
    sessionTurns: Statement<[string]>;
    deleteSession: Statement<[string]>;
    configsWithRejections: Statement<[]>;
  };

  private readonly cache: ReplayCache;
  /** Parsed model configs, read per request (verdicts a session keeps); every own write to one empties this. */
  private readonly modelConfigs: ReadCache<SessionModelConfig>;
  /** One transaction for a batch of turns; built once (better-sqlite3 builds a wrapper per `transaction()` call). */
  private readonly writeTurns: (turns: readonly NewTurn[], createdAt: string | undefined) => WrittenTurn[];
  /** When each finished turn is durable, and when it is committed (journal, group commit). */
  private readonly durable: DurableTurns;

  /**
   * `journaled`: the gateway's store, whose turns are durable in the journal
   * before their SQLite commit (see TurnJournal, DurableTurns); without it
   * (CLI commands, in-memory stores) a turn is durable at its commit.
   */
  constructor(
    @inject(DATABASE) private readonly db: Db,
    journaled?: { readonly journal: TurnJournal; readonly log: Logger },
  ) {
    this.cache = new ReplayCache(db);
    this.modelConfigs = new ReadCache(foreignWrites(db), 50_000);
    this.writeTurns = db.transaction((turns: readonly NewTurn[], createdAt: string | undefined) => turns.map((turn) => this.writeTurn(turn, createdAt)));
    const prepare = <P extends unknown[]>(sql: string) => db.prepare<P>(sql);
    this.statements = {
      // one statement for a whole history: a 1,000-turn resend costs one query, not a thousand;
      // per fingerprint one probe of turns_fingerprint (its entries end with seq, so newest first needs no sort),
      // at most MATCHES_PER_FINGERPRINT (a greeting seen in thousands of sessions must not load them all)
      // both keys (SPEC §12.6) in one statement: per key one probe of its index (turns_fingerprint, or the partial
      // turns_call_key that holds tool-call turns only), newest first
      keyMatchesMany: prepare(
        `SELECT j.value AS key, t.seq, t.id, t.session_id, t.parent_turn_id FROM json_each(@fingerprints) j CROSS JOIN turns t
           ON t.seq IN (SELECT f.seq FROM turns f WHERE f.key_hash = @keyHash AND f.fingerprint = j.value ORDER BY f.seq DESC LIMIT ${MATCHES_PER_FINGERPRINT})
         UNION ALL
         SELECT j.value AS key, t.seq, t.id, t.session_id, t.parent_turn_id FROM json_each(@callKeys) j CROSS JOIN turns t
           ON t.seq IN (SELECT f.seq FROM turns f WHERE f.key_hash = @keyHash AND f.call_key = j.value ORDER BY f.seq DESC LIMIT ${MATCHES_PER_FINGERPRINT})
         ORDER BY 2 DESC`,
      ),
      replaySources: prepare(
        `SELECT id, session_id, plugin, upstream_model, reasoning_text, reasoning_details, native_record FROM turns WHERE id IN (SELECT value FROM json_each(?))`,
      ),
      turnsAtPositions: prepare(`SELECT id, session_id, position, parent_turn_id FROM turns WHERE session_id = ? AND position IN (SELECT value FROM json_each(?))`),
      sessionExists: prepare(`SELECT 1 FROM sessions WHERE id = ?`),
      turnExists: prepare(`SELECT 1 FROM turns WHERE id = ?`),
      insertSession: prepare(`INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      insertTurn: prepare(
        `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                            reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key)
         VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE session_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING position`,
      ),
      modelConfig: prepare(`SELECT model_config FROM sessions WHERE id = ?`),
      setModelConfig: prepare(`UPDATE sessions SET model_config = ? WHERE id = ?`),
      // a session's last activity and model are its newest turn's (see writeTurn), or the row's own for a session without turns
      listSessions: prepare(
        `SELECT s.id, COALESCE(last.model, s.model) AS model, s.parent_id, s.created_at, MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
                (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turns
           FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
          ORDER BY updated_at DESC, s.rowid DESC LIMIT ?`,
      ),
      sessionRow: prepare(
        `SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, s.parent_id, s.model_config, s.created_at, MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at
           FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
          WHERE s.id = ?`,
      ),
      sessionTurns: prepare(`SELECT * FROM turns WHERE session_id = ? ORDER BY position`),
      deleteSession: prepare(`DELETE FROM sessions WHERE id = ?`),
      configsWithRejections: prepare(`SELECT id, model_config FROM sessions WHERE model_config LIKE '%rejected_carriers%'`),
    };
    this.durable = new DurableTurns(this.turnWriter, journaled);
  }

  /** How DurableTurns reaches SQLite and the replay cache. */
  private readonly turnWriter: TurnWriter = {
    write: (turns, remember, createdAt) => this.commitTurns(turns, remember, createdAt),
    stored: (id) => this.statements.turnExists.get(id) !== undefined,
    remember: (turn) =>
      this.remember(turn, carrierSize(turn.reasoningText, turn.reasoningDetails ? JSON.stringify(turn.reasoningDetails) : null, turn.nativeRecord ? JSON.stringify(turn.nativeRecord) : null)),
    recover: (turns) => this.recoverTurns(turns),
  };

  /**
   * Matches for many turn keys at once (fingerprints and call keys, see
   * TurnKeys), most recent first per key: a key seen in several sessions
   * resolves to the most recent (SPEC §4). One query for all the misses.
   */
  fingerprintMatchesMany(keyHash: string, keys: readonly string[]): Map<string, FingerprintMatch[]> {
    const found = new Map<string, FingerprintMatch[]>();
    if (keys.length === 0) return found;
    this.cache.validate();
    // every key is usually cached: a Set to drop duplicates is made only for the misses
    let misses: Set<string> | undefined;
    for (const key of keys) {
      const cached = this.cache.matchesFor(keyHash, key);
      if (cached === undefined) (misses ??= new Set()).add(key);
      else if (cached.length > 0) found.set(key, cached);
    }
    if (!misses) return found;
    this.settle();
    const missed = [...misses];
    const read = new Map<string, FingerprintMatch[]>(missed.map((key) => [key, []]));
    const fingerprints = missed.filter((key) => !key.startsWith(CALL_KEY_PREFIX));
    const callKeys = fingerprints.length === missed.length ? [] : missed.filter((key) => key.startsWith(CALL_KEY_PREFIX));
    const rows = this.statements.keyMatchesMany.all({ fingerprints: JSON.stringify(fingerprints), callKeys: JSON.stringify(callKeys), keyHash }) as { key: string; id: string; session_id: string; parent_turn_id: string | null }[];
    for (const row of rows) read.get(row.key)?.push({ id: row.id, session_id: row.session_id, parent_turn_id: row.parent_turn_id });
    for (const [key, list] of read) {
      this.cache.rememberMatches(keyHash, key, list); // a miss is remembered too: a new conversation asks again next turn
      if (list.length > 0) found.set(key, list);
    }
    return found;
  }

  /**
   * The carriers of many turns, under the caller's keys (a request's message
   * indexes): from memory when recently replayed, else in one query. Keyed
   * as the caller needs them, so a request builds one map, not one by id
   * and another by index.
   */
  replaySources<K>(turnIds: ReadonlyMap<K, string>): Map<K, ReplaySource> {
    const found = new Map<K, ReplaySource>();
    if (turnIds.size === 0) return found;
    this.cache.validate();
    let misses: string[] | undefined;
    for (const [key, id] of turnIds) {
      const cached = this.cache.sourceFor(id);
      if (cached) found.set(key, cached);
      else (misses ??= []).push(id);
    }
    if (!misses) return found;
    this.settle();
    const read = new Map<string, ReplaySource>();
    for (const row of this.statements.replaySources.all(JSON.stringify(misses)) as ReplayRow[]) {
      const source = toReplaySource(row);
      read.set(row.id, source);
      this.cache.rememberSource(source, carrierSize(row.reasoning_text, row.reasoning_details, row.native_record));
    }
    for (const [key, id] of turnIds) {
      const source = read.get(id);
      if (source) found.set(key, source);
    }
    return found;
  }

  /** The session's turns at these positions, in one query. */
  turnsAtPositions(sessionId: string, positions: readonly number[]): Map<number, FingerprintMatch> {
    this.settle();
    const rows = this.statements.turnsAtPositions.all(sessionId, JSON.stringify(positions)) as { id: string; session_id: string; position: number; parent_turn_id: string | null }[];
    return new Map(rows.map((row) => [row.position, { id: row.id, session_id: row.session_id, parent_turn_id: row.parent_turn_id }]));
  }

  sessionExists(id: string): boolean {
    this.settle();
    return this.statements.sessionExists.get(id) !== undefined;
  }

  /** Writes the turn (its fingerprint is a column of it) and the session if new, in one transaction; returns the turn's position. */
  saveTurn(turn: NewTurn, createdAt?: string): number {
    this.settle();
    return this.durable.commit([turn], createdAt)[0]!;
  }

  /** Makes the turn durable, then resolves; the caller ends its answer after that (see DurableTurns.save). */
  saveTurnDurably(turn: NewTurn, alone = true): Promise<void> {
    return this.durable.save(turn, alone);
  }

  /** Called once a request has gone upstream: a batch of journaled turns is committed while the gateway waits (see DurableTurns). */
  commitWaitingBatch(): void {
    this.durable.commitWaitingBatch();
  }

  /** Commits what a previous process journaled but did not commit, before this one serves (see DurableTurns.recover). */
  recoverJournal(): number {
    return this.durable.recover();
  }

  /**
   * Commits every turn not committed yet (journaled ones waiting, and
   * those due at the end of this turn of the event loop) now. Every method
   * here that reads or writes SQLite calls it first, so the connection reads
   * as if each turn were committed when it was made durable: a scratch session removed right after its turn completed stays
   * removed, a session made by a turn exists for a verdict. Code that
   * touches turns or sessions through another object on the same connection
   * calls it (or a method here) first too.
   */
  settle(): void {
    this.durable.settle();
  }

  /** Resolves once every turn made durable so far is in state.db, where other processes read it (see DurableTurns.committed). */
  turnsCommitted(): Promise<void> {
    return this.durable.committed();
  }

  /** A batch of turns in one transaction; the replay cache learns those `remember` accepts. */
  private commitTurns(turns: readonly NewTurn[], remember: (turn: NewTurn) => boolean, createdAt?: string): number[] {
    this.cache.validateOwnConnection();
    const written = this.writeTurns(turns, createdAt);
    turns.forEach((turn, index) => {
      if (remember(turn)) this.remember(turn, written[index]!.size);
    });
    this.cache.acknowledgeOwnWrite();
    return written.map(({ position }) => position);
  }

  /** Journaled turns a previous process did not commit, in one transaction; those stored already are skipped. */
  private recoverTurns(turns: readonly JournaledTurn[]): number {
    return this.db.transaction(() => {
      let written = 0;
      for (const { turn, createdAt } of turns) {
        if (this.statements.turnExists.get(turn.id) !== undefined) continue;
        this.writeTurn(turn, createdAt);
        written++;
      }
      return written;
    })();
  }

  private writeTurn(turn: NewTurn, createdAt?: string): WrittenTurn {
    const now = createdAt ?? new Date().toISOString();
    const reasoningDetails = turn.reasoningDetails ? JSON.stringify(turn.reasoningDetails) : null;
    const nativeRecord = turn.nativeRecord ? JSON.stringify(turn.nativeRecord) : null;
    // the session row is written once, when its first turn is: its activity is its turns, so a turn touches no session pages
    // (a commit writes one WAL frame per page it dirtied: this saved two of about nine). The turn is one row, its
    // fingerprint included (migration 3): its table and three indexes, about four pages
    this.statements.insertSession.run(turn.sessionId, turn.keyHash, turn.model, null, "{}", now, now);
    const { position } = this.statements.insertTurn.get(
      turn.id,
      turn.sessionId,
      turn.sessionId,
      turn.parentTurnId ?? null,
      turn.model,
      turn.plugin,
      turn.provider,
      turn.host,
      turn.upstreamModel,
      JSON.stringify(turn.prompt),
      turn.content,
      turn.toolCalls.length > 0 ? JSON.stringify(turn.toolCalls) : null,
      turn.reasoningText,
      reasoningDetails,
      nativeRecord,
      turn.usage ? JSON.stringify(turn.usage) : null,
      turn.finishReason,
      turn.upstreamId ?? null,
      now,
      turn.keyHash,
      turn.fingerprint,
      callKeyOf(turn.toolCalls) ?? null,
    ) as { position: number };
    return { position, size: carrierSize(turn.reasoningText, reasoningDetails, nativeRecord) };
  }

  /**
   * A new turn is the newest match of its fingerprint and its carriers are
   * at hand: keep both in memory. Called when it is committed, or for a
   * journaled turn when it is journaled (the next request must find it, and
   * the cache answers without asking SQLite), not again at its commit: a
   * second copy of its reasoning would only be garbage for the old
   * generation of the heap.
   */
  private remember(turn: NewTurn, size: number): void {
    const source: ReplaySource = {
      id: turn.id,
      sessionId: turn.sessionId,
      plugin: turn.plugin,
      upstreamModel: turn.upstreamModel,
      // a copy: the text of an answer read whole is a view into the upstream's whole JSON answer, which the cache would keep too
      reasoningText: detached(turn.reasoningText),
      reasoningDetails: turn.reasoningDetails as Json[] | undefined,
      nativeRecord: turn.nativeRecord,
    };
    const match = { id: turn.id, session_id: turn.sessionId, parent_turn_id: turn.parentTurnId ?? null };
    this.cache.addTurn(turn.keyHash, [turn.fingerprint, callKeyOf(turn.toolCalls)], match, source, size);
  }

  /** Creates an empty session (an explicit X-Session-Id that does not exist yet, or a verdict before the first turn). */
  ensureSession(id: string, keyHash: string, model: string | null): void {
    this.settle();
    const now = new Date().toISOString();
    this.statements.insertSession.run(id, keyHash, model, null, "{}", now, now);
  }

  /** The session's model config; read-only for the caller (it may be shared from memory). */
  modelConfig(sessionId: string): Readonly<SessionModelConfig> {
    return this.modelConfigs.get(sessionId, () => this.readModelConfig(sessionId));
  }

  private readModelConfig(sessionId: string): SessionModelConfig {
    this.settle();
    const row = this.statements.modelConfig.get(sessionId) as { model_config: string } | undefined;
    return parseJson<SessionModelConfig>(row?.model_config) ?? {};
  }

  /** Read-modify-write in one transaction, so two requests of one session cannot lose each other's patch. */
  patchModelConfig(sessionId: string, patch: (config: SessionModelConfig) => SessionModelConfig): void {
    this.settle();
    this.modelConfigs.clear();
    this.db.transaction(() => {
      const next = patch(this.readModelConfig(sessionId));
      this.statements.setModelConfig.run(JSON.stringify(next), sessionId);
    })();
  }

  /** Removes rejected carriers matching `predicate` from every session's model config (verdict clearing). */
  removeRejections(predicate: (provider: string, host: string, model: string, field: string) => boolean): number {
    this.settle();
    this.modelConfigs.clear();
    let changed = 0;
    this.db.transaction(() => {
      for (const row of this.statements.configsWithRejections.all() as { id: string; model_config: string }[]) {
        const config = parseJson<SessionModelConfig>(row.model_config) ?? {};
        const before = JSON.stringify(config.rejected_carriers ?? []);
        config.rejected_carriers = (config.rejected_carriers ?? [])
          .map(([provider, host, model, fields]) => [provider, host, model, fields.filter((field) => !predicate(provider, host, model, field))] as [string, string, string, string[]])
          .filter((entry) => entry[3].length > 0);
        if (JSON.stringify(config.rejected_carriers) !== before) {
          this.statements.setModelConfig.run(JSON.stringify(config), row.id);
          changed++;
        }
      }
    })();
    return changed;
  }

  listSessions(limit: number): SessionSummary[] {
    this.settle();
    return (this.statements.listSessions.all(limit) as { id: string; model: string | null; parent_id: string | null; turns: number; created_at: string; updated_at: string }[]).map((row) => ({
      id: row.id,
      model: row.model,
      parentId: row.parent_id,
      turns: row.turns,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }));
  }

  session(id: string): (SessionSummary & { modelConfig: SessionModelConfig; turnList: StoredTurn[]; prompts: ChatMessage[][] }) | undefined {
    this.settle();
    const row = this.statements.sessionRow.get(id) as { id: string; model: string | null; parent_id: string | null; model_config: string; created_at: string; updated_at: string } | undefined;
    if (!row) return undefined;
    const rows = this.statements.sessionTurns.all(id) as TurnRow[];
    return {
      id: row.id,
      model: row.model,
      parentId: row.parent_id,
      turns: rows.length,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      modelConfig: parseJson<SessionModelConfig>(row.model_config) ?? {},
      turnList: rows.map(toStoredTurn),
      prompts: rows.map((turn) => parseJson<ChatMessage[]>(turn.prompt) ?? []),
    };
  }

  /**
   * A new session holding turns 1..at of `sourceId`, every carrier copied
   * byte for byte (the rows are copied in SQL, never re-serialised), with
   * their fingerprints (and the key hash they were written under) so
   * stateless clients of the branch find it.
   */
  branch(sourceId: string, newId: string, at: number | undefined): number {
    this.settle();
    this.modelConfigs.delete(newId);
    return this.db.transaction(() => {
      const source = this.statements.sessionRow.get(sourceId) as { key_hash: string; model: string | null; model_config: string } | undefined;
      if (!source) throw new Error(`no session ${sourceId}`);
      const now = new Date().toISOString();
      this.statements.insertSession.run(newId, source.key_hash, source.model, sourceId, source.model_config, now, now);
      const limit = at ?? Number.MAX_SAFE_INTEGER;
      const copied = this.db
        .prepare(
          `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                              reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key)
           SELECT 'turn_' || lower(hex(randomblob(12))), ?, position, NULL, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                  reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key
             FROM turns WHERE session_id = ? AND position <= ? ORDER BY position`,
        )
        .run(newId, sourceId, limit).changes;
      // parents follow positions in the copy: turn N's parent is turn N-1
      this.db
        .prepare(`UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position = turns.position - 1) WHERE session_id = ?`)
        .run(newId);
      return copied;
    })();
  }

  /** Before the database closes: the journal's file is let go (turns still in it are committed at the next start). */
  close(): void {
    this.durable.close();
  }

  removeSession(id: string): boolean {
    this.settle();
    this.modelConfigs.delete(id);
    return this.statements.deleteSession.run(id).changes > 0;
  }
}

interface WrittenTurn {
  position: number;
  /** Characters of its carrier columns, for the cache's size limit. */
  size: number;
}

function carrierSize(...columns: (string | null)[]): number {
  return columns.reduce((sum, column) => sum + (column?.length ?? 0), 0);
}

function toReplaySource(row: ReplayRow): ReplaySource {
  return {
    id: row.id,
    sessionId: row.session_id,
    plugin: row.plugin,
    upstreamModel: row.upstream_model,
    reasoningText: row.reasoning_text ?? "",
    reasoningDetails: parseJson<Json[]>(row.reasoning_details),
    nativeRecord: parseJson<JsonObject>(row.native_record),
  };
}

/** A whole stored turn: its replay source (the carriers and who produced them) plus the rest of the row. */
function toStoredTurn(row: TurnRow): StoredTurn {
  return {
    ...toReplaySource(row),
    seq: row.seq,
    position: row.position,
    parentTurnId: row.parent_turn_id,
    model: row.model,
    provider: row.provider,
    host: row.host,
    content: row.content,
    toolCalls: parseJson<ToolCall[]>(row.tool_calls) ?? [],
    usage: parseJson<Usage>(row.usage),
    finishReason: row.finish_reason,
    upstreamId: row.upstream_id,
    createdAt: row.created_at,
  };
}

function parseJson<T>(text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
