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
 * LIST_DEADLINE_MS; a list past either bound is a 429 `history_busy` at once,
 * never a wait in line. The lists themselves run off the request path (the
 * SQLite store reads them in a worker, PostgreSQL on a connection of their own).
 */
export class ListGate {
  private readonly running = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perKey = LISTS_PER_KEY,
    private readonly perGateway = LISTS_PER_GATEWAY,
  ) {}

  /** Runs `list` for `key` within the bounds, with its deadline (ms since the epoch). */
  async run<T>(key: string, list: (deadline: number) => Promise<T>): Promise<T> {
    const mine = this.running.get(key) ?? 0;
    if (mine >= this.perKey) throw busy(`this key already has ${mine} session list${mine === 1 ? "" : "s"} running; ask again when it has answered`);
    if (this.total >= this.perGateway) throw busy("the gateway is answering as many session lists as it runs at once; ask again in a moment");
    this.running.set(key, mine + 1);
    this.total++;
    try {
      return await list(Date.now() + LIST_DEADLINE_MS);
    } finally {
      this.total--;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
    }
  }
}

function busy(message: string): GatewayError {
  return new GatewayError("history_busy", message, null, { headers: { "retry-after": "1" } });
}
