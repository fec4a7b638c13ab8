/**
 * How many upstream requests are open: sent, and their answer not yet read
 * through, failed or aborted. A statistic of the pool, as cheap as a number:
 * the composition root hands a reader of it to the SQLite store, which
 * tells from it whether a finishing turn completes while the gateway waits
 * on an upstream for another (docs/performance.md#a-turn-made-durable).
 */
export class OpenExchanges {
  private open = 0;

  get count(): number {
    return this.open;
  }

  opened(): void {
    this.open++;
  }

  closed(): void {
    this.open--;
  }
}
