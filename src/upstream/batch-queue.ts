/**
 * Batches handed from a push source (a socket's data callbacks) to one
 * async consumer. The consumer awaits once per batch, not once per item; a
 * batch pushed while nobody waits is kept until the next read. `onStop` runs
 * when the consumer stops reading before the end (its `for await` broke or
 * threw), so the source can stop producing.
 */
export class BatchQueue<T> implements AsyncIterableIterator<readonly T[]> {
  private readonly ready: (readonly T[])[] = [];
  private waiting: { resolve: (result: IteratorResult<readonly T[]>) => void; reject: (error: unknown) => void } | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private stopped = false;

  constructor(private readonly onStop: () => void) {}

  push(batch: readonly T[]): void {
    if (this.ended || this.stopped) return;
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve({ done: false, value: batch });
    } else {
      this.ready.push(batch);
    }
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = { error };
    this.wake();
  }

  next(): Promise<IteratorResult<readonly T[]>> {
    const batch = this.ready.shift();
    if (batch) return Promise.resolve({ done: false, value: batch });
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.ended || this.stopped) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<readonly T[]>> {
    if (!this.ended && !this.stopped) {
      this.stopped = true;
      this.onStop();
    }
    this.ready.length = 0;
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private wake(): void {
    if (!this.waiting || this.ready.length > 0) return;
    const { resolve, reject } = this.waiting;
    this.waiting = undefined;
    if (this.failure) reject(this.failure.error);
    else resolve({ done: true, value: undefined });
  }
}
