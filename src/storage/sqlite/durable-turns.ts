import type { Logger } from "../../foundation/logging/logger.js";
import { GroupCommit } from "./group-commit.js";
import type { NewTurn } from "../turns.js";
import type { JournaledTurn, TurnJournal } from "./turn-journal.js";

/**
 * Journaled turns are committed to SQLite together, once this many wait
 * and a request has gone upstream (see `commitWaitingBatch`), or the oldest has waited `JOURNAL_MAX_WAIT_MS`.
 * A commit costs much the same whatever it holds (its file locks, the WAL
 * frames of the pages every turn shares) and little more per turn, so a
 * commit per lone turn would be a large share of a request's CPU.
 */
export const JOURNAL_BATCH_TURNS = 16;
/** The longest another process (a CLI command) waits to read a journaled turn from state.db. */
export const JOURNAL_MAX_WAIT_MS = 25;

/** The gateway's turns: durable in the journal before their SQLite commit when they complete alone. */
export interface JournaledTurns {
  readonly journal: TurnJournal;
  readonly log: Logger;
  /**
   * How many requests the gateway has open upstream now (the transport's
   * count, OpenExchanges): a turn completing while any is open is not
   * alone. Without it every turn completes alone.
   */
  readonly upstreamOpen?: () => number;
}

/** What DurableTurns needs of the store that writes turns to SQLite. */
export interface TurnWriter {
  /** Writes the turns in one transaction and returns their positions; the replay cache learns those `remember` accepts. */
  write(turns: readonly NewTurn[], remember: (turn: NewTurn) => boolean, createdAt?: string): number[];
  /** Whether a turn with this id is in SQLite already (another process recovered it from the journal). */
  stored(id: string): boolean;
  /** Puts a journaled turn in the replay cache before its commit: the next request must find it. */
  remember(turn: NewTurn): void;
  /** Writes journaled turns in one transaction, skipping those stored already; returns how many it wrote. */
  recover(turns: readonly JournaledTurn[]): number;
}

/**
 * When a finished turn becomes durable, and when it reaches SQLite: turns
 * that complete in one turn of the event loop share one commit (see
 * GroupCommit); a turn that completes alone goes to the journal (see
 * TurnJournal) and is committed later, off its answer's path.
 */
export class DurableTurns {
  private readonly group = new GroupCommit<NewTurn, number>(
    (turns) => this.commit(turns),
    (turn) => this.commitOne(turn),
  );
  /** Journaled turns not yet committed to SQLite; the journal is emptied by the commit that leaves none. */
  private readonly inJournal = new Set<NewTurn>();
  /** Journaled turns whose commit waits for a moment the gateway would otherwise spend waiting (see commitWaiting). */
  private waiting: NewTurn[] = [];
  private waitingTimer: NodeJS.Timeout | undefined;
  private readonly commitWaitingLater = (): void => {
    this.waitingTimer = undefined;
    this.commitWaiting();
  };
  private readonly notJournaled = (turn: NewTurn): boolean => !this.inJournal.has(turn);
  private closed = false;
  /** Callers of `committed()` waiting for the journal to hold no uncommitted turn. */
  private readonly committedWaiters: (() => void)[] = [];

  /**
   * `journaled`: the gateway's turns, durable in the journal before their
   * SQLite commit; without it (CLI commands, in-memory stores) a turn is
   * durable at its commit.
   */
  constructor(
    private readonly writer: TurnWriter,
    private readonly journaled?: JournaledTurns,
  ) {}

  /**
   * Makes the turn durable, then resolves; the caller ends its answer after
   * that. Turns that complete in one turn of the event loop share one
   * commit and resolve once it is done. A turn that completes alone (no
   * request open upstream: JournaledTurns.upstreamOpen, its own answer being
   * read through already) would wait for a whole commit by itself, a large share of what carrierd
   * adds to a request: with a journal it is appended there instead and resolves at
   * once. Its commit waits, with the turns journaled after it, until
   * `JOURNAL_BATCH_TURNS` of them wait and the next request has gone
   * upstream (`commitWaitingBatch`), a read or write through the store
   * needs them (`settle`), a turn completes beside them, or
   * `JOURNAL_MAX_WAIT_MS` pass, whichever comes first (so another process,
   * a CLI command, reads the turn from state.db at most that long after its
   * answer ended).
   * Turns that complete beside others are not journaled: under load, answers
   * that each leave as soon as they are durable break up the bursts in which
   * the next requests arrive, and throughput falls.
   * A journaled turn whose commit fails stays in the journal and is retried.
   */
  save(turn: NewTurn): Promise<void> {
    if (!this.journaled || !this.alone() || this.group.due() || this.waiting.length >= JOURNAL_BATCH_TURNS) {
      this.commitWaiting(); // first: turns are committed in the order they completed
      return this.group.add(turn).then(nothing);
    }
    try {
      this.journaled.journal.append(turn);
    } catch (error) {
      return Promise.reject(error);
    }
    this.inJournal.add(turn);
    this.writer.remember(turn);
    this.waiting.push(turn);
    if (this.waiting.length === 1) this.waitingTimer = setTimeout(this.commitWaitingLater, JOURNAL_MAX_WAIT_MS);
    return Promise.resolve();
  }

  /**
   * Queues the journaled turns for one commit at the end of this turn of
   * the event loop once a batch of them waits. Called as a request is about
   * to go upstream (its TurnStorage.lookup): the gateway would wait for the
   * answer anyway, so under light load most of the commit costs no one any
   * time.
   */
  commitWaitingBatch(): void {
    if (this.waiting.length >= JOURNAL_BATCH_TURNS) this.commitWaiting();
  }

  /** Queues every journaled turn for the commit at the end of this turn of the event loop. */
  commitWaiting(): void {
    if (this.waiting.length === 0) return;
    const turns = this.waiting;
    this.waiting = [];
    clearTimeout(this.waitingTimer);
    for (const turn of turns) this.commitJournaled(turn);
  }

  /** Commits every turn not committed yet (journaled ones waiting, and those due at the end of this turn of the event loop) now. */
  settle(): void {
    this.commitWaiting();
    this.group.flushNow();
  }

  /**
   * Resolves once every turn made durable so far is committed to state.db,
   * where another process (a CLI command) reads it: at once when no
   * journaled turn waits, else at the commit that empties the journal.
   */
  committed(): Promise<void> {
    if (this.inJournal.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.committedWaiters.push(resolve));
  }

  /** Writes the turns now, in one transaction; returns their positions. */
  commit(turns: readonly NewTurn[], createdAt?: string): number[] {
    // a journaled turn was remembered when it was journaled (unless the cache was emptied since: then SQLite answers)
    const positions = this.writer.write(turns, this.notJournaled, createdAt);
    this.outOfJournal(turns);
    return positions;
  }

  /**
   * Commits what a previous process journaled but did not commit (it ended
   * between the two), before this one serves; turns already stored are
   * skipped. Turns that cannot be written are logged and kept in a copy of
   * the journal beside it, so the gateway still starts and nothing is lost.
   */
  recover(): number {
    if (!this.journaled) return 0;
    const { journal, log } = this.journaled;
    const { turns, unreadable } = journal.read();
    if (unreadable > 0) log.warn({ file: journal.file, lines: unreadable }, "journal lines that could not be read were skipped (a write cut short)");
    let recovered = 0;
    try {
      recovered = this.writer.recover(turns);
    } catch (error) {
      const copy = journal.keepCopy(`unrecovered-${Date.now()}`);
      log.error({ err: error, copy }, "journaled turns could not be committed to state.db; the journal was kept as a copy");
    }
    journal.clear();
    if (recovered > 0) log.info({ turns: recovered }, "turns recovered from the journal");
    return recovered;
  }

  /** Before the database closes: the journal's file is let go (turns still in it are committed at the next start). */
  close(): void {
    if (this.closed) return;
    try {
      this.settle();
    } catch {
      // the database is gone already: what is journaled is committed at the next start
    }
    this.closed = true;
    this.journaled?.journal.close();
    // nothing more is committed by this process: what is left waits in the journal for the next start
    for (const resolve of this.committedWaiters.splice(0)) resolve();
  }

  /** No request of the gateway's is open upstream: nothing else is about to complete beside this turn. */
  private alone(): boolean {
    return (this.journaled?.upstreamOpen?.() ?? 0) === 0;
  }

  private commitJournaled(turn: NewTurn): void {
    this.group.add(turn).catch((error: unknown) => {
      // still in the journal, and recovered from it at the next start should this process end first
      const log = this.journaled!.log;
      if (this.closed) return log.warn({ turn_id: turn.id }, "a journaled turn is left for the next start to commit");
      log.error({ err: error, turn_id: turn.id, session_id: turn.sessionId }, "a journaled turn could not be committed to state.db; retrying in a second");
      setTimeout(() => this.commitJournaled(turn), 1000).unref();
    });
  }

  /** One turn alone (a batch's fallback): a turn stored already (recovered by another process) counts as written. */
  private commitOne(turn: NewTurn): number {
    if (this.journaled && this.writer.stored(turn.id)) {
      this.outOfJournal([turn]);
      return 0;
    }
    this.settle();
    return this.commit([turn])[0];
  }

  /**
   * These turns are in state.db: the journal is emptied once none it holds
   * is left uncommitted. Called in the commit itself, not in a continuation
   * of it, so that `close` settles and then closes the journal in one go.
   */
  private outOfJournal(turns: readonly NewTurn[]): void {
    if (this.inJournal.size === 0) return;
    for (const turn of turns) this.inJournal.delete(turn);
    if (this.inJournal.size > 0) return;
    this.journaled!.journal.clear();
    for (const resolve of this.committedWaiters.splice(0)) resolve();
  }
}

function nothing(): void {}
