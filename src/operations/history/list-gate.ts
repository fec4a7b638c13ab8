import { GatewayError } from "../../foundation/errors/gateway-error.js";

/** Session lists one key may have running at once. */
export const LISTS_PER_KEY = 1;
/** Session lists the gateway runs at once, every key together. */
export const LISTS_PER_GATEWAY = 2;
/** How long one list may search before it is stopped where it is. */
export const LIST_DEADLINE_MS = 2000;

/**
 * What keeps one key's history searches from slowing every other key
 * (docs/operators.md#session-history-under-load): at most LISTS_PER_KEY lists
 * per key and LISTS_PER_GATEWAY in all run at once, each stopped at
 * LIST_DEADLINE_MS, and a key rests after each list as long as the list took,
 * so one key's searches hold the store at most half the time. A list past
 * any bound is a 429 `history_busy` at once (Retry-After: when it may ask
 * again), never a wait in line. The lists themselves run off the request path (the
 * SQLite store reads them in a worker, PostgreSQL on a connection of their own).
 */
export class ListGate {
  private readonly running = new Map<string, number>();
  /** Until when (ms since the epoch) each key rests after its last list. */
  private readonly resting = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perKey = LISTS_PER_KEY,
    private readonly perGateway = LISTS_PER_GATEWAY,
  ) {}

  /** Runs `list` for `key` within the bounds, with its deadline (ms since the epoch). */
  async run<T>(key: string, list: (deadline: number) => Promise<T>): Promise<T> {
    const mine = this.running.get(key) ?? 0;
    if (mine >= this.perKey) throw busy(`this key already has ${mine} session list${mine === 1 ? "" : "s"} running; ask again when it has answered`, 1000);
    const started = Date.now();
    const rest = (this.resting.get(key) ?? 0) - started;
    if (rest > 0) throw busy(`this key's last session list searched for ${rest} ms more than it has rested since; ask again then`, rest);
    this.resting.delete(key);
    if (this.total >= this.perGateway) throw busy("the gateway is answering as many session lists as it runs at once; ask again in a moment", 1000);
    this.running.set(key, mine + 1);
    this.total++;
    try {
      return await list(started + LIST_DEADLINE_MS);
    } finally {
      const finished = Date.now();
      this.resting.set(key, Math.max(this.resting.get(key) ?? 0, finished + (finished - started)));
      this.total--;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
    }
  }
}

function busy(message: string, waitMs: number): GatewayError {
  return new GatewayError("history_busy", message, null, { headers: { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) } });
}
