/**
 * Durations in log-spaced buckets, each 8 % wider than the one before, from
 * 1 ms to over an hour: a percentile read from it is within 8 % of the true
 * value, and a minute of traffic costs one small map however many requests
 * it held. Histograms of adjacent intervals add up (`merge`), so a window
 * of any length is read from the intervals it covers.
 */
const GROWTH = 1.08;
const LOG_GROWTH = Math.log(GROWTH);
/** ≈ 1 h 20 min in ms; anything longer lands in the last bucket. */
const LAST_BUCKET = 190;

export class LatencyHistogram {
  /** Bucket index → count; index i holds durations in (GROWTH^(i-1), GROWTH^i] ms, index 0 everything up to 1 ms. */
  private readonly counts = new Map<number, number>();
  private total = 0;

  get count(): number {
    return this.total;
  }

  record(ms: number): void {
    if (!(ms >= 0)) return; // NaN or negative: a clock that went backwards is not a latency
    const index = ms <= 1 ? 0 : Math.min(LAST_BUCKET, Math.ceil(Math.log(ms) / LOG_GROWTH));
    this.counts.set(index, (this.counts.get(index) ?? 0) + 1);
    this.total++;
  }

  merge(other: LatencyHistogram): void {
    for (const [index, count] of other.counts) this.counts.set(index, (this.counts.get(index) ?? 0) + count);
    this.total += other.total;
  }

  /** The duration below which `fraction` of the recorded ones lie (the bucket's upper bound, in ms), or null when none were recorded. */
  quantile(fraction: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(fraction * this.total));
    let seen = 0;
    for (const index of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(index)!;
      if (seen >= rank) return index === 0 ? 1 : Math.round(GROWTH ** index * 10) / 10;
    }
    return null;
  }
}
