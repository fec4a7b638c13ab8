/**
 * Writes that complete in the same turn of the event loop, committed in one
 * transaction; each promise resolves once its own write is committed. A
 * SQLite commit costs far more than its statements, so under concurrency
 * sharing it is most of what persistence can save; alone, a write waits one setImmediate.
 *
 * `writeAll` writes a batch in one transaction and returns each item's
 * result, in order. If it throws, the batch is written one item at a time
 * with `writeOne`, so that one item that cannot be written does not take
 * the others down with it.
 */
export class GroupCommit<T, R> {
  private pending: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];

  constructor(
    private readonly writeAll: (items: readonly T[]) => readonly R[],
    private readonly writeOne: (item: T) => R,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length === 1) setImmediate(this.flush);
    });
  }

  /** Whether a commit is due at the end of this turn of the event loop (something was added). */
  due(): boolean {
    return this.pending.length > 0;
  }

  /** Writes what is pending now rather than at the end of this turn of the event loop. */
  flushNow(): void {
    if (this.pending.length > 0) this.flush();
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    if (batch.length === 0) return; // flushed early (flushNow)
    this.pending = [];
    let results: readonly R[];
    try {
      results = this.writeAll(batch.map(({ item }) => item));
    } catch {
      for (const { item, resolve, reject } of batch) {
        try {
          resolve(this.writeOne(item));
        } catch (error) {
          reject(error);
        }
      }
      return;
    }
    batch.forEach(({ resolve }, index) => resolve(results[index]));
  };
}
