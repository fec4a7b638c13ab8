import type { LatencyHistogram } from "./latency-histogram.js";
import type { Series } from "./provider-stats.js";
import { ReloadTally, Tally, type ErrorCount } from "./tally.js";
import type { TimeRing } from "./time-ring.js";

export type WindowName = "5m" | "1h" | "24h";

/** A window the panel shows: how many intervals of which ring, and how many of them make one chart point. */
export interface WindowSpec {
  readonly name: WindowName;
  readonly seconds: number;
  readonly ring: "fine" | "coarse";
  readonly intervals: number;
  readonly perPoint: number;
  /** Seconds per chart point. */
  readonly step: number;
}

export const WINDOWS = {
  "5m": { name: "5m", seconds: 300, ring: "fine", intervals: 30, perPoint: 1, step: 10 },
  "1h": { name: "1h", seconds: 3600, ring: "fine", intervals: 360, perPoint: 6, step: 60 },
  "24h": { name: "24h", seconds: 86_400, ring: "coarse", intervals: 288, perPoint: 1, step: 300 },
} as const satisfies Record<WindowName, WindowSpec>;

export function isWindowName(value: string): value is WindowName {
  return Object.hasOwn(WINDOWS, value);
}

interface Percentiles {
  p50: number | null;
  p95: number | null;
  count: number;
}

/** One provider and model over a window (docs/api.md#get-v1statsproviders). */
export interface ProviderWindow {
  provider: string;
  model: string;
  requests: number;
  completed: number;
  failed: number;
  errors: ErrorCount[];
  time_to_first_reasoning_ms: Percentiles;
  time_to_completion_ms: Percentiles;
  tokens: { input: number; output: number };
  verdicts: number;
  /** Chart points, oldest first: each point's start (seconds since the epoch) and its numbers. */
  points: { t: number[]; requests: number[]; errors: number[]; p95_completion_ms: (number | null)[] };
}

export interface WindowSnapshot {
  window: WindowName;
  seconds: number;
  step_seconds: number;
  now: string;
  reloads: { reloaded: number; rejected: number };
  providers: ProviderWindow[];
}

/** The window's totals per provider and model (those with anything in it, busiest first), and its route reloads. */
export function windowSnapshot(
  spec: WindowSpec,
  series: readonly Series[],
  reloads: { fine: TimeRing<ReloadTally>; coarse: TimeRing<ReloadTally> },
  now: number,
): WindowSnapshot {
  const reloadTotal = new ReloadTally();
  for (const { value } of reloads[spec.ring].last(now, spec.intervals)) if (value) reloadTotal.merge(value);
  const providers = series
    .map((one) => providerWindow(spec, one, now))
    .filter((window): window is ProviderWindow => window !== undefined)
    .sort((a, b) => b.requests - a.requests || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
  return {
    window: spec.name,
    seconds: spec.seconds,
    step_seconds: spec.step,
    now: new Date(now).toISOString(),
    reloads: { reloaded: reloadTotal.reloaded, rejected: reloadTotal.rejected },
    providers,
  };
}

function providerWindow(spec: WindowSpec, series: Series, now: number): ProviderWindow | undefined {
  const intervals = series[spec.ring].last(now, spec.intervals);
  const total = new Tally();
  const points: ProviderWindow["points"] = { t: [], requests: [], errors: [], p95_completion_ms: [] };
  for (let i = 0; i < intervals.length; i += spec.perPoint) {
    const point = new Tally();
    for (const { value } of intervals.slice(i, i + spec.perPoint)) if (value) point.merge(value);
    total.merge(point);
    points.t.push(intervals[i].start / 1000);
    points.requests.push(point.requests);
    points.errors.push(point.failed);
    points.p95_completion_ms.push(point.completion.quantile(0.95));
  }
  if (total.requests === 0 && total.failed === 0 && total.verdicts === 0) return undefined;
  return {
    provider: series.provider,
    model: series.model,
    requests: total.requests,
    completed: total.completed,
    failed: total.failed,
    errors: [...total.errors.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    time_to_first_reasoning_ms: percentiles(total.firstReasoning),
    time_to_completion_ms: percentiles(total.completion),
    tokens: { input: total.tokensIn, output: total.tokensOut },
    verdicts: total.verdicts,
    points,
  };
}

function percentiles(histogram: LatencyHistogram): Percentiles {
  return { p50: histogram.quantile(0.5), p95: histogram.quantile(0.95), count: histogram.count };
}
