import type { Statement } from "better-sqlite3";
import type { NewTurn, ReplaySource } from "../turns.js";
import type { Json } from "../../providers/contract.js";
import { detached } from "../../foundation/util/detached.js";
import type { Db } from "./database.js";
import { DurableTurns, type JournaledTurns, type TurnWriter } from "./durable-turns.js";
import type { ReplayCache } from "./replay-cache.js";
import { carrierSize, TURN_COLUMNS, turnValues, type TurnJsonColumns } from "../rows.js";
import type { HeadColumns } from "../recent-heads.js";
import type { JournaledTurn } from "./turn-journal.js";
import { columnsOf } from "./turn-columns.js";

interface WrittenTurn {
  position: number;
  /** Characters of its carrier columns, for the cache's size limit. */
  size: number;
}

/**
 * Completed turns into SQLite: each with every carrier verbatim and the
 * fingerprint stateless clients are matched through, its session written
 * with its first turn. When a turn is durable, and when it is committed,
 * is DurableTurns' to decide.
 */
export class TurnWrites {
  private readonly statements: {
    turnExists: Statement<[string]>;
    insertSession: Statement<unknown[]>;
    insertTurn: Statement<unknown[]>;
    promptHeadStored: Statement<[string]>;
    insertPromptHead: Statement<[string, string]>;
  };
  /** One transaction for a batch of turns; built once (better-sqlite3 builds a wrapper per `transaction()` call). */
  private readonly writeTurns: (turns: readonly NewTurn[], createdAt: string | undefined) => WrittenTurn[];
  /** When each finished turn is durable, and when it is committed (journal, group commit). */
  private readonly durable: DurableTurns;

  /**
   * `journaled`: the gateway's turns, durable in the journal before their
   * SQLite commit (see TurnJournal, DurableTurns); without it (CLI
   * commands, in-memory stores) a turn is durable at its commit.
   */
  constructor(
    private readonly db: Db,
    private readonly cache: ReplayCache,
    journaled?: JournaledTurns,
  ) {
    this.writeTurns = db.transaction((turns: readonly NewTurn[], createdAt: string | undefined) => turns.map((turn) => this.writeTurn(turn, createdAt)));
    this.statements = {
      turnExists: db.prepare(`SELECT 1 FROM turns WHERE id = ?`),
      insertSession: db.prepare(
        `INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      // position: one more than the session's newest; depth, when not given, the same
      insertTurn: db.prepare(
        `INSERT INTO turns (${TURN_COLUMNS}, position)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                 COALESCE(?, (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE session_id = ?)), (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE session_id = ?))
         RETURNING position`,
      ),
      // a head is written once, by the first turn that sends it (prompt-heads.ts); later ones find its key and write nothing
      promptHeadStored: db.prepare(`SELECT 1 FROM prompt_heads WHERE hash = ?`),
      insertPromptHead: db.prepare(`INSERT OR IGNORE INTO prompt_heads (hash, text) VALUES (?, ?)`),
    };
    this.durable = new DurableTurns(this.turnWriter, journaled);
  }

  /** How DurableTurns reaches SQLite and the replay cache. */
  private readonly turnWriter: TurnWriter = {
    write: (turns, remember, createdAt) => this.commitTurns(turns, remember, createdAt),
    stored: (id) => this.statements.turnExists.get(id) !== undefined,
    remember: (turn) => this.remember(turn, sizeOf(turn, columnsOf(turn).json)),
    recover: (turns) => this.recoverTurns(turns),
  };

  /**
   * A request has read what it needs before its first upstream call
   * (TurnStorage.lookup): it goes upstream in this turn of the event loop,
   * and the gateway waits for the answer. A batch of journaled turns is
   * committed meanwhile (see DurableTurns.commitWaitingBatch; the commit
   * runs at the end of this turn of the event loop, after the request is sent).
   */
  goingUpstream(): void {
    this.durable.commitWaitingBatch();
  }

  /**
   * Makes the turn durable, then resolves: shared with the turns completing
   * alongside in one commit, or through the journal when it completes alone
   * (no request open upstream; see DurableTurns.save).
   */
  save(turn: NewTurn): Promise<void> {
    return this.durable.save(turn);
  }

  /** Writes the turn (and its session if new) now, in one transaction; returns its position. For seeding and backend tests. */
  saveNow(turn: NewTurn, createdAt?: string): number {
    this.settle();
    return this.durable.commit([turn], createdAt)[0];
  }

  /** Commits what a previous process journaled but did not commit, before this one serves (see DurableTurns.recover). */
  recoverJournal(): number {
    return this.durable.recover();
  }

  /**
   * Commits every turn not committed yet (journaled ones waiting, and
   * those due at the end of this turn of the event loop) now. Every read or
   * write of turns or sessions on this connection calls it first, so the
   * connection reads as if each turn were committed when it was made
   * durable: a scratch session removed right after its turn completed stays
   * removed, a session made by a turn exists for a verdict.
   */
  settle(): void {
    this.durable.settle();
  }

  /** Resolves once every turn made durable so far is in state.db, where other processes read it (see DurableTurns.committed). */
  committed(): Promise<void> {
    return this.durable.committed();
  }

  /** Before the database closes: the journal's file is let go (turns still in it are committed at the next start). */
  close(): void {
    this.durable.close();
  }

  /** A batch of turns in one transaction; the replay cache learns those `remember` accepts. */
  private commitTurns(turns: readonly NewTurn[], remember: (turn: NewTurn) => boolean, createdAt?: string): number[] {
    this.cache.validateOwnConnection();
    const written = this.writeTurns(turns, createdAt);
    turns.forEach((turn, index) => {
      if (remember(turn)) this.remember(turn, written[index].size);
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
    const { json, callKey } = columnsOf(turn);
    // the session row is written once, when its first turn is: its activity is its turns, so a turn touches no session pages
    // (a commit writes one WAL frame per page it dirtied: this saved two of about nine). The turn is one row, its
    // fingerprint included (migration 3): its table and three indexes, about four pages
    this.statements.insertSession.run(turn.sessionId, turn.keyHash, turn.model, null, "{}", now, now);
    if (json.prompt.head) this.writePromptHead(json.prompt.head);
    const values = turnValues(turn, now, callKey, json);
    const { position } = this.statements.insertTurn.get(...values, turn.sessionId, turn.sessionId) as { position: number };
    return { position, size: sizeOf(turn, json) };
  }

  /**
   * Heads stored only when absent (docs/performance.md#turn-columns-made-once):
   * the head is looked up by its key first, and its text (tens of KB)
   * handed to SQLite only when no row has it. `INSERT OR IGNORE` of a head
   * stored already converts, copies and builds a record of the whole text
   * before it finds the key taken: 6.4 µs for a 28 KB head, the lookup
   * 0.6 µs. Both run in the turn's transaction after its session's insert
   * took the write lock, so no other connection writes between them.
   * Removing it: the insert alone.
   */
  private writePromptHead(head: HeadColumns): void {
    if (this.statements.promptHeadStored.get(head.hash) === undefined) this.statements.insertPromptHead.run(head.hash, head.text);
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
    this.cache.addTurn(turn.keyHash, [turn.fingerprint, columnsOf(turn).callKey], match, source, size);
  }
}

/** Characters of the turn's carrier columns, for the replay cache's size limit. */
function sizeOf(turn: NewTurn, json: TurnJsonColumns): number {
  return carrierSize(turn.reasoningText, json.reasoningDetails, json.nativeRecord);
}
