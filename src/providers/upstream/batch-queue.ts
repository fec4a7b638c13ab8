/** What a queue asks of its source when its reader falls behind. */
export interface Backpressure {
  /** Bytes of unread batches past which the source is paused. */
  readonly limit: number;
  /** Stop producing (the transport stops reading its socket). */
  pause(): void;
  /** Produce again: the reader caught up. */
  resume(): void;
}

/**
 * Batches handed from a push source (a socket's data callbacks) to one
 * async consumer. The consumer awaits once per batch, not once per item; a
 * batch pushed while nobody waits is kept until the next read. `onStop` runs
 * when the consumer stops reading before the end (its `for await` broke or
 * threw), so the source can stop producing.
 *
 * With `backpressure`, each batch is pushed with its size in bytes (what
 * the source read for it); past the limit unread, the source is paused, and
 * it resumes once the reader has taken every batch. What a stream holds
 * between the upstream's socket and its client is bounded by that limit,
 * whatever the client does.
 */
export class BatchQueue<T> implements AsyncIterableIterator<readonly T[]> {
  private readonly ready: (readonly T[])[] = [];
  /** Bytes of each batch in `ready`, in the same order. */
  private readonly sizes: number[] = [];
  private queuedBytes = 0;
  private paused = false;
  private waiting: { resolve: (result: IteratorResult<readonly T[]>) => void; reject: (error: unknown) => void } | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private stopped = false;

  constructor(
    private readonly onStop: () => void,
    private readonly backpressure?: Backpressure,
  ) {}

  /** Bytes pushed and not read yet. */
  get unreadBytes(): number {
    return this.queuedBytes;
  }

  push(batch: readonly T[], bytes = 0): void {
    if (this.ended || this.stopped) return;
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve({ done: false, value: batch });
      return;
    }
    this.ready.push(batch);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
    if (this.backpressure && !this.paused && this.queuedBytes > this.backpressure.limit) {
      this.paused = true;
      this.backpressure.pause();
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
    if (batch) {
      this.queuedBytes -= this.sizes.shift() ?? 0;
      if (this.paused && this.ready.length === 0) {
        this.paused = false;
        this.backpressure!.resume();
      }
      return Promise.resolve({ done: false, value: batch });
    }
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
    this.sizes.length = 0;
    this.queuedBytes = 0;
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
