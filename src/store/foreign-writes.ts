import type { Db } from "./database.js";

/**
 * Tells the in-memory caches of a connection (replay lookups, verdicts,
 * session model configs) when another connection committed — a CLI
 * `verdicts clear` or `sessions rm` while the gateway runs: `PRAGMA
 * data_version` moves then. It is read at most once per synchronous stretch
 * of the event loop: a request's lookups all happen in one such stretch and
 * share the read, which would otherwise be a statement per lookup.
 */
export class ForeignWrites {
  private readonly dataVersion: () => number;
  private version = -1;
  private epoch = 0;
  private readThisStretch = false;
  private readonly endStretch = (): void => {
    this.readThisStretch = false;
  };

  constructor(db: Db) {
    const statement = db.prepare("PRAGMA data_version").pluck();
    this.dataVersion = () => statement.get() as number;
  }

  /** A number that changes whenever another connection has committed since it was last read. */
  epochNow(): number {
    if (!this.readThisStretch) {
      this.readThisStretch = true;
      queueMicrotask(this.endStretch);
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
