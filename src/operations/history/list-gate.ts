import { GatewayError } from "../../foundation/errors/gateway-error.js";

/** Session lists one key may have running at once. */
export const LISTS_PER_KEY = 1;
/** Session lists the gateway runs at once, every key together. */
export const LISTS_PER_GATEWAY = 2;
/** How long one list may search before it is stopped where it is. */
export const LIST_DEADLINE_MS = 2000;
/** Milliseconds of listing a key has in hand when it has not listed for a while: pages turned one after another never run out. */
export const LIST_CREDIT_MS = 1000;
/** Milliseconds of listing a key earns per millisecond: searching without pause, a key's lists hold the store half the time. */
export const LIST_CREDIT_RATE = 0.5;

/**
 * What keeps one key's history searches from slowing every other key
 * (docs/operators.md#session-history-under-load): at most LISTS_PER_KEY lists
 * per key and LISTS_PER_GATEWAY in all run at once, each stopped at
 * LIST_DEADLINE_MS, and each key spends what its lists take from a credit of
 * LIST_CREDIT_MS that refills at LIST_CREDIT_RATE, so a key searching
 * without pause holds the store at most half the time while one turning
 * pages never notices. A list past any bound is a 429 `history_busy` at
 * once (Retry-After: when it may ask again), never a wait in line. The lists themselves run off the request path (the
 * SQLite store reads them in a worker, PostgreSQL on a connection of their own).
 */
export class ListGate {
  private readonly running = new Map<string, number>();
  /** Each key's listing credit (ms) as of `at` (ms since the epoch); a key with a full credit has no entry. */
  private readonly credit = new Map<string, { balance: number; at: number }>();
  private total = 0;

  constructor(
    private readonly perKey = LISTS_PER_KEY,
    private readonly perGateway = LISTS_PER_GATEWAY,
    private readonly creditMs = LIST_CREDIT_MS,
  ) {}

  /** Runs `list` for `key` within the bounds, with its deadline (ms since the epoch). */
  async run<T>(key: string, list: (deadline: number) => Promise<T>): Promise<T> {
    const mine = this.running.get(key) ?? 0;
    if (mine >= this.perKey) throw busy(`this key already has ${mine} session list${mine === 1 ? "" : "s"} running; ask again when it has answered`, 1000);
    const started = Date.now();
    const balance = this.balance(key, started);
    if (balance <= 0) {
      const wait = Math.ceil(-balance / LIST_CREDIT_RATE) + 1;
      throw busy(`this key's session lists have searched for as long as it may for now; ask again in ${wait} ms`, wait);
    }
    if (this.total >= this.perGateway) throw busy("the gateway is answering as many session lists as it runs at once; ask again in a moment", 1000);
    this.running.set(key, mine + 1);
    this.total++;
    try {
      return await list(started + LIST_DEADLINE_MS);
    } finally {
      const finished = Date.now();
      this.credit.set(key, { balance: this.balance(key, finished) - (finished - started), at: finished });
      this.total--;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
    }
  }

  /** The key's credit at `now`, refilled since it was last spent (an entry refilled whole is dropped). */
  private balance(key: string, now: number): number {
    const spent = this.credit.get(key);
    if (!spent) return this.creditMs;
    const balance = Math.min(this.creditMs, spent.balance + (now - spent.at) * LIST_CREDIT_RATE);
    if (balance >= this.creditMs) this.credit.delete(key);
    return balance;
  }
}

function busy(message: string, waitMs: number): GatewayError {
  return new GatewayError("history_busy", message, null, { headers: { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) } });
}
