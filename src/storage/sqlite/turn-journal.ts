import { closeSync, copyFileSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import type { NewTurn } from "../turns.js";
import { journalJson } from "./turn-columns.js";

/** The journal's file name under $CARRIERD_HOME. */
export const JOURNAL_FILE = "turns.journal";

/**
 * Whether the journal at `file` holds a turn of `sessionId`: one its
 * gateway has not committed to state.db yet (or has, beside others it has
 * not: the journal empties once all are). Read-only: for CLI commands,
 * which never write the journal.
 */
export function journalHoldsSession(file: string, sessionId: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  if (!text.includes(sessionId)) return false; // the usual answer, without a parse
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      if ((JSON.parse(line) as { turn?: Partial<NewTurn> }).turn?.sessionId === sessionId) return true;
    } catch {
      // a line cut short: the gateway skips it too
    }
  }
  return false;
}

/**
 * Finished turns, each durable once appended here: the gateway's answer
 * ends right after, and the turn's SQLite commit follows in the same turn
 * of the event loop, off the answer's path. One `write()` of one line is
 * far cheaper than a SQLite commit (two `pwrite`s per page it dirtied and
 * four file locks), which at one connection would be a large share of all
 * carrierd adds to a request.
 *
 * The guarantee is SQLite's own in WAL mode with `synchronous = NORMAL`: a
 * write survives the process dying, not the machine losing power (neither
 * this nor the WAL is fsynced per turn). Once every appended turn is in
 * SQLite the file is emptied; a file that is not empty when the gateway
 * starts holds turns a process journaled but did not commit, and the
 * gateway writes them before it serves (`TurnWrites.recoverJournal`, from openSqliteStorage).
 * One gateway per `$CARRIERD_HOME` owns the journal; CLI commands only
 * read it (`journalHoldsSession`).
 */
export class TurnJournal {
  private readonly fd: number;
  private bytes: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, "a", 0o600);
    this.bytes = fstatSync(this.fd).size;
  }

  /** Appends the turn; it survives this process when this returns. */
  append(turn: NewTurn): void {
    // the completion time goes with it: a turn recovered at the next start keeps when it was answered
    const line = `{"at":${Date.now()},"turn":${journalJson(turn)}}\n`;
    // the text itself, not a Buffer made of it first: one copy fewer, on the answer's path
    const written = writeSync(this.fd, line);
    const length = Buffer.byteLength(line);
    if (written < length) this.writeRest(Buffer.from(line), written);
    this.bytes += length;
  }

  /** What a short write left (a file system nearly full): written out, or the error that stops it thrown. */
  private writeRest(line: Buffer, written: number): void {
    while (written < line.length) written += writeSync(this.fd, line, written);
  }

  /** Every appended turn is in SQLite now: the file starts over. */
  clear(): void {
    if (this.bytes === 0) return;
    ftruncateSync(this.fd, 0);
    this.bytes = 0;
  }

  /** The journaled turns, oldest first, and how many lines could not be read (a line cut short when the machine went down mid-write). */
  read(): { turns: JournaledTurn[]; unreadable: number } {
    const turns: JournaledTurn[] = [];
    let unreadable = 0;
    for (const line of readFileSync(this.file, "utf8").split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as { at: number; turn: NewTurn };
        turns.push({ createdAt: new Date(entry.at).toISOString(), turn: entry.turn });
      } catch {
        unreadable++;
      }
    }
    return { turns, unreadable };
  }

  /** Keeps a copy of the file beside it (turns that could not be recovered), and returns its path. */
  keepCopy(suffix: string): string {
    const copy = `${this.file}.${suffix}`;
    copyFileSync(this.file, copy);
    return copy;
  }

  close(): void {
    closeSync(this.fd);
  }
}

export interface JournaledTurn {
  /** When the turn was journaled (ISO 8601). */
  readonly createdAt: string;
  readonly turn: NewTurn;
}
