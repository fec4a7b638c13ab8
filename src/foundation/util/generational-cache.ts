/**
 * A bounded map that never deletes one entry at a time. New entries go into
 * the young generation; once it holds half the capacity it becomes the old
 * one, the previous old generation is dropped whole, and a new young one
 * starts. A hit in the old generation is copied into the young one, so what
 * is still used stays; what was not used for a generation goes.
 *
 * Why not a Map evicting its oldest entry: V8 rebuilds a Map's hash table
 * every few deletions and links each old table to its successor (for
 * iterators), so under steady churn a table that reached the old generation
 * keeps every later table, and what they hold, alive through young-generation
 * GCs. Measured with a 4,096-entry first-in-first-out cache: 5.2 MB
 * surviving each scavenge against 0.9 MB for two generations.
 */
export class GenerationalCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private youngWeight = 0;

  /** `weigh` measures an entry against `capacity` (by default each counts 1). */
  constructor(
    private readonly capacity: number,
    private readonly weigh: (key: K, value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    const replaced = this.young.has(key);
    this.young.set(key, value);
    if (replaced) return;
    this.youngWeight += this.weigh(key, value);
    if (this.youngWeight * 2 >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
      this.youngWeight = 0;
    }
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngWeight = 0;
  }
}
