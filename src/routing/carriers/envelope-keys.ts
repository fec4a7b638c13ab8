import { randomBytes } from "node:crypto";
import type { EnvelopeKey } from "../../storage/envelope-keys.js";
import type { EnvelopeKeyStorage } from "../../storage/storage.js";
import { ENVELOPE_LIFETIME_MS } from "./envelope.js";

export interface EnvelopeKeyRingOptions {
  /** How long the keys read are used as they are before the next seal reads them again in the background. */
  readonly refreshMs?: number;
  /** At most one read of the store per this many milliseconds for envelopes naming a key not held (anyone can write such an id). */
  readonly unknownIdReadMs?: number;
  /** An envelope's lifetime: a key stops opening this long after a newer one replaced it. */
  readonly lifetimeMs?: number;
  readonly now?: () => number;
}

/**
 * The envelope keys of this deployment, held in memory: read from the store
 * once, then served from here. The newest generation seals; every key still
 * within an envelope's lifetime of its replacement opens. A key this
 * instance does not hold (another instance rotated) is read at once when an
 * envelope names it; the sealing key is re-read in the background once the
 * keys are older than `refreshMs`, so no request waits for the store then.
 */
export class EnvelopeKeyRing {
  private keys: readonly EnvelopeKey[] = [];
  private loadedAt = -Infinity;
  private lastUnknownRead = -Infinity;
  private loading: Promise<readonly EnvelopeKey[]> | undefined;
  private readonly refreshMs: number;
  private readonly unknownIdReadMs: number;
  private readonly lifetimeMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: EnvelopeKeyStorage,
    options: EnvelopeKeyRingOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 60_000;
    this.unknownIdReadMs = options.unknownIdReadMs ?? 1_000;
    this.lifetimeMs = options.lifetimeMs ?? ENVELOPE_LIFETIME_MS;
    this.now = options.now ?? Date.now;
  }

  /** The key that seals now: the newest generation, created in the store (generation 1) on first use. */
  async sealing(): Promise<EnvelopeKey> {
    if (this.keys.length === 0) await this.load();
    else if (this.now() - this.loadedAt > this.refreshMs) void this.load().catch(() => undefined);
    if (this.keys.length === 0) this.keys = await this.store.ensure(newKey(1, this.now()));
    return this.keys[this.keys.length - 1];
  }

  /** The key of this id while it still opens, or undefined. */
  async opening(id: string): Promise<EnvelopeKey | undefined> {
    if (this.keys.length === 0) await this.load();
    let index = this.keys.findIndex((key) => key.id === id);
    if (index < 0 && this.now() - this.lastUnknownRead >= this.unknownIdReadMs) {
      this.lastUnknownRead = this.now();
      await this.load();
      index = this.keys.findIndex((key) => key.id === id);
    }
    if (index < 0) return undefined;
    const replaced = this.keys[index + 1]?.createdAt;
    return replaced === undefined || this.now() < replaced + this.lifetimeMs ? this.keys[index] : undefined;
  }

  /** Adds the next generation, which seals from now on (on every instance once it has read it); answers it. */
  async rotate(): Promise<EnvelopeKey> {
    const current = await this.store.ensure();
    const next = newKey((current.at(-1)?.generation ?? 0) + 1, this.now());
    this.keys = await this.store.ensure(next);
    this.loadedAt = this.now();
    return this.keys[this.keys.length - 1];
  }

  /** One read of the store at a time; callers that arrive meanwhile share it. */
  private load(): Promise<readonly EnvelopeKey[]> {
    this.loading ??= this.store
      .ensure()
      .then((keys) => {
        this.keys = keys;
        this.loadedAt = this.now();
        return keys;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }
}

function newKey(generation: number, createdAt: number): EnvelopeKey {
  return { generation, id: randomBytes(8).toString("hex"), secret: randomBytes(32), createdAt };
}
