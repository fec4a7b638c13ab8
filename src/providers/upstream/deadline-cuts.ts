import type { DeadlineName } from "./deadline-watch.js";

/**
 * How many upstream exchanges each deadline cut, per provider, since the
 * gateway started: `/metrics` shows them as
 * `carrierd_upstream_deadline_cuts_total{provider, deadline}`. One map
 * update per cut; nothing on an exchange that ends in time.
 */
export class DeadlineCuts {
  private readonly counts = new Map<string, { provider: string; deadline: DeadlineName; count: number }>();

  note(provider: string, deadline: DeadlineName): void {
    const key = `${deadline} ${provider}`;
    const entry = this.counts.get(key);
    if (entry) entry.count++;
    else this.counts.set(key, { provider, deadline, count: 1 });
  }

  /** Every provider and deadline that cut at least one exchange, with its count. */
  entries(): readonly { provider: string; deadline: DeadlineName; count: number }[] {
    return [...this.counts.values()];
  }
}
