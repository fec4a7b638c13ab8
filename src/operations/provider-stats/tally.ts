import { LatencyHistogram } from "./latency-histogram.js";

/** An error the provider panel counts: the gateway's code, and the upstream's HTTP status when it answered with one. */
export interface ErrorCount {
  code: string;
  status: number | null;
  count: number;
}

/** What happened to one provider and model in one interval (or a window, once intervals are merged). */
export class Tally {
  requests = 0;
  completed = 0;
  failed = 0;
  /** `code status` → its count. */
  readonly errors = new Map<string, ErrorCount>();
  tokensIn = 0;
  tokensOut = 0;
  verdicts = 0;
  /** From sending the request upstream to its first reasoning byte. */
  readonly firstReasoning = new LatencyHistogram();
  /** From sending the request upstream to the end of a completed turn. */
  readonly completion = new LatencyHistogram();

  countError(code: string, status: number | null): void {
    const key = `${code} ${status ?? ""}`;
    const known = this.errors.get(key);
    if (known) known.count++;
    else this.errors.set(key, { code, status, count: 1 });
  }

  merge(other: Tally): void {
    this.requests += other.requests;
    this.completed += other.completed;
    this.failed += other.failed;
    for (const [key, error] of other.errors) {
      const known = this.errors.get(key);
      if (known) known.count += error.count;
      else this.errors.set(key, { ...error });
    }
    this.tokensIn += other.tokensIn;
    this.tokensOut += other.tokensOut;
    this.verdicts += other.verdicts;
    this.firstReasoning.merge(other.firstReasoning);
    this.completion.merge(other.completion);
  }
}

/** Route reloads in one interval: they belong to no provider. */
export class ReloadTally {
  reloaded = 0;
  rejected = 0;

  merge(other: ReloadTally): void {
    this.reloaded += other.reloaded;
    this.rejected += other.rejected;
  }
}
