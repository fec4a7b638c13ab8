/** Turns whose end never came (a crash mid-stream) must not grow a subscriber's table forever. */
const MAX_OPEN_TURNS = 10_000;

/**
 * The turns a bus subscriber has seen start and not yet end, by turn_id,
 * each with what it keeps to time them (when it went upstream, whether its
 * first reasoning token is still to come). At most 10,000: past that the
 * turn open longest is forgotten.
 *
 * An object in dictionary mode, not a Map: a Map that gains and loses an
 * entry per request rebuilds its hash table every few requests and V8 links
 * each old table to the next, so one table that reached the old generation
 * kept all later ones alive through young-generation GCs
 * (docs/performance.md#what-a-waiting-turn-holds).
 */
export class OpenTurns<T> {
  private turns: Record<string, T> = Object.create(null) as Record<string, T>;
  private count = 0;

  /** A turn that started (or started again: the newer value wins). */
  open(turnId: string, turn: T): void {
    if (this.count >= MAX_OPEN_TURNS) this.forgetOldest();
    if (!(turnId in this.turns)) this.count++;
    this.turns[turnId] = turn;
  }

  /** The open turn of an event's turn_id, if any. */
  get(turnId: unknown): T | undefined {
    return typeof turnId === "string" ? this.turns[turnId] : undefined;
  }

  /** The turn ended: what was kept for it, and it is forgotten. */
  close(turnId: unknown): T | undefined {
    if (typeof turnId !== "string") return undefined;
    const turn = this.turns[turnId];
    if (turn) {
      delete this.turns[turnId];
      this.count--;
    }
    return turn;
  }

  clear(): void {
    this.turns = Object.create(null) as Record<string, T>;
    this.count = 0;
  }

  /** The turn open longest (string keys keep their insertion order). */
  private forgetOldest(): void {
    for (const turnId in this.turns) {
      this.close(turnId);
      return;
    }
  }
}
