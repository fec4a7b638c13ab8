import type { KeyStorage } from "../../storage/storage.js";
import type { KeyUse } from "../../storage/keys.js";

/**
 * Request counts and last-used times per key, counted in memory and added
 * to the store at most once per `flushMs`: a request costs one map update,
 * never a write.
 */
export class KeyUsage {
  private pending = new Map<string, { requests: number; lastUsedAt: number }>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly keys: Pick<KeyStorage, "recordUse">,
    flushMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  note(name: string, now: number): void {
    const use = this.pending.get(name);
    if (use) {
      use.requests++;
      use.lastUsedAt = now;
    } else this.pending.set(name, { requests: 1, lastUsedAt: now });
  }

  /** Adds what was counted since the last flush to the store. */
  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing;
    const uses: KeyUse[] = [...this.pending].map(([name, use]) => ({ name, ...use }));
    this.pending = new Map();
    this.flushing = this.flushing.then(() => this.keys.recordUse(uses)).catch(this.onError);
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
