import type { Db } from "./database.js";

/**
 * Tells the in-memory caches of a connection (replay lookups, verdicts,
 * session model configs) when another connection committed — a CLI
 * `verdicts clear` or `sessions rm` while the gateway runs: `PRAGMA
 * data_version` moves then. Reading it is a read transaction (two `fcntl`
 * locks on the WAL index), so it is read at most once per turn of the event
 * loop, until that turn's check phase: every request handled in one poll
 * phase shares the read. That still sees every write that finished before a
 * request was sent: the request's bytes were there when the poll returned,
 * so that write came before the poll, and the read comes after it. (A read
 * first made after the poll phase — a continuation of the group commit —
 * serves until the next check phase, so there a write can be seen one turn
 * of the loop late.)
 */
export class ForeignWrites {
  private readonly dataVersion: () => number;
  private version = -1;
  private epoch = 0;
  private readThisTurn = false;
  private readonly endTurn = (): void => {
    this.readThisTurn = false;
  };

  constructor(db: Db) {
    const statement = db.prepare("PRAGMA data_version").pluck();
    this.dataVersion = () => statement.get() as number;
  }

  /** A number that changes whenever another connection has committed since it was last read. */
  epochNow(): number {
    if (!this.readThisTurn) {
      this.readThisTurn = true;
      setImmediate(this.endTurn);
      const version = this.dataVersion();
      if (version !== this.version) {
        this.version = version;
        this.epoch++;
      }
    }
    return this.epoch;
  }
}

const byDatabase = new WeakMap<Db, ForeignWrites>();

/** The one watcher of a connection, shared by every cache on it. */
export function foreignWrites(db: Db): ForeignWrites {
  let watch = byDatabase.get(db);
  if (!watch) byDatabase.set(db, (watch = new ForeignWrites(db)));
  return watch;
}

/**
 * Reads kept in memory that only another connection's commit can make stale
 * (this process's own writes clear or delete what they change): emptied when
 * one happened, and when `limit` entries are held.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  private epoch = -1;

  constructor(
    private readonly foreign: ForeignWrites,
    private readonly limit: number,
  ) {}

  get(key: string, read: () => V): V {
    const epoch = this.foreign.epochNow();
    if (epoch !== this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    let value = this.entries.get(key);
    if (value === undefined) {
      value = read();
      if (this.entries.size >= this.limit) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
