/**
 * The last `size` intervals of `stepMs` each, one value per interval,
 * created when the interval is first written and reused once it has fallen
 * out of the ring: memory is bounded by the ring, not by the traffic.
 */
export class TimeRing<T> {
  private readonly slots: ({ index: number; value: T } | undefined)[];

  constructor(
    readonly stepMs: number,
    readonly size: number,
    private readonly create: () => T,
  ) {
    this.slots = new Array<{ index: number; value: T } | undefined>(size);
  }

  /** The value of the interval `now` falls in, fresh if that interval had none yet. */
  at(now: number): T {
    const index = Math.floor(now / this.stepMs);
    const position = index % this.size;
    const slot = this.slots[position];
    if (slot?.index === index) return slot.value;
    const value = this.create();
    this.slots[position] = { index, value };
    return value;
  }

  /**
   * The `count` intervals up to and including the one `now` falls in,
   * oldest first: each with its start (ms since the epoch) and its value,
   * undefined for an interval nothing was written in.
   */
  last(now: number, count: number): { start: number; value: T | undefined }[] {
    const newest = Math.floor(now / this.stepMs);
    const intervals: { start: number; value: T | undefined }[] = [];
    for (let index = newest - Math.min(count, this.size) + 1; index <= newest; index++) {
      const slot = this.slots[index % this.size];
      intervals.push({ start: index * this.stepMs, value: slot?.index === index ? slot.value : undefined });
    }
    return intervals;
  }
}
