import { inject, injectable } from "tsyringe";
import { EVENT_BUS } from "../../foundation/container/tokens.js";
import type { EventBus, GatewayEvent, GatewayEventType } from "../../foundation/event-bus/event-bus.js";
import { OpenTurns } from "../../foundation/event-bus/open-turns.js";
import { shown } from "../../foundation/util/shown.js";
import { ReloadTally, Tally } from "./tally.js";
import { TimeRing } from "./time-ring.js";
import { windowSnapshot, WINDOWS, type WindowName, type WindowSnapshot } from "./stats-snapshot.js";

/** 10-second intervals for an hour: the 5 min and 1 h windows. */
const FINE_STEP_MS = 10_000;
const FINE_SLOTS = 360;
/** 5-minute intervals for a day: the 24 h window. */
const COARSE_STEP_MS = 300_000;
const COARSE_SLOTS = 288;
/**
 * Rows the panel keeps. A provider and model has a row of its own once its
 * upstream has served it (a turn completed); until then what it asks is
 * counted in its provider's NOT_SERVED row, so names a client makes up
 * through a glob route (`openrouter/*`), which the upstream refuses, take no
 * row and push no real model out. Provider names come from routes.yaml. Past
 * this many rows, new ones are counted together as one; a row with nothing
 * in the day's window is dropped.
 */
const MAX_SERIES = 256;
const OTHER = "(other)";
export const NOT_SERVED = "(not served)";

const COUNTED: GatewayEventType[] = [
  "turn.started",
  "turn.completed",
  "turn.failed",
  "upstream.failed",
  "verdict.recorded",
  "routes.reloaded",
  "routes.rejected",
];

/**
 * Counting in batches (docs/performance.md#the-requests-edges): events wait, with the times they arrived at, until
 * this many are pending (about 80 requests' worth) or the panel is read.
 * Counted one event at a time, this code is cold each time (3–5 µs an event
 * inside the gateway); a batch runs it warm. The times are taken when the
 * event arrives, so the figures are the same.
 */
const COUNT_BATCH = 256;

/** Events waiting to be counted, and when each arrived: Date.now() (the interval it counts in) and performance.now() (its latency). */
interface Arrivals {
  events: GatewayEvent[];
  nows: number[];
  ats: number[];
}

/** One provider and upstream model, in both resolutions. */
export interface Series {
  readonly provider: string;
  readonly model: string;
  readonly fine: TimeRing<Tally>;
  readonly coarse: TimeRing<Tally>;
}

interface OpenTurn {
  series: Series;
  /** performance.now() when its request went upstream. */
  readonly sentAt: number;
  awaitingReasoning: boolean;
  /** A model its upstream has not served yet: its row if it completes, and what is counted then. */
  readonly candidate?: { provider: string; model: string; startedNow: number; firstReasoning?: { ms: number; now: number } };
}

/**
 * The provider panel's numbers (docs/api.md#get-v1statsproviders): per
 * provider and upstream model, over the last 5 min, 1 h and 24 h, of this
 * instance only, kept in memory and fed by the event bus. Each event costs a
 * few map lookups, counted in batches (COUNT_BATCH); reading is what merges
 * intervals.
 */
@injectable()
export class ProviderStats {
  private readonly series = new Map<string, Series>();
  private readonly reloads = {
    fine: new TimeRing(FINE_STEP_MS, FINE_SLOTS, () => new ReloadTally()),
    coarse: new TimeRing(COARSE_STEP_MS, COARSE_SLOTS, () => new ReloadTally()),
  };
  private readonly openTurns = new OpenTurns<OpenTurn>();
  /** Events not counted yet (COUNT_BATCH), each with Date.now() and performance.now() when it arrived. */
  private pending: Arrivals = { events: [], nows: [], ats: [] };
  private countScheduled: NodeJS.Immediate | undefined;
  private readonly unsubscribe: () => void;
  private readonly stopWatchingReasoning: () => void;

  constructor(@inject(EVENT_BUS) bus: EventBus) {
    this.unsubscribe = bus.subscribe((event) => this.arrived(event), COUNTED, { untimed: true });
    // a turn's first reasoning delta only: its time to first reasoning byte
    this.stopWatchingReasoning = bus.subscribe((event) => this.arrived(event), ["reasoning.delta"], { firstOfTurn: true, untimed: true });
  }

  /** The window's totals and chart points, at `now` (ms since the epoch). */
  snapshot(window: WindowName, now = Date.now()): WindowSnapshot {
    this.countPending();
    this.dropIdle(now);
    return windowSnapshot(WINDOWS[window], [...this.series.values()], this.reloads, now);
  }

  close(): void {
    this.unsubscribe();
    this.stopWatchingReasoning();
    if (this.countScheduled) clearImmediate(this.countScheduled);
    this.pending = { events: [], nows: [], ats: [] };
    this.openTurns.clear();
  }

  private arrived(event: GatewayEvent): void {
    const { events, nows, ats } = this.pending;
    events.push(event);
    nows.push(Date.now());
    ats.push(performance.now());
    // a full batch is counted once this turn of the event loop is done (after its writes)
    if (events.length >= COUNT_BATCH) this.countScheduled ??= setImmediate(this.countPending);
  }

  private readonly countPending = (): void => {
    if (this.countScheduled) clearImmediate(this.countScheduled);
    this.countScheduled = undefined;
    const { events, nows, ats } = this.pending;
    if (events.length === 0) return;
    this.pending = { events: [], nows: [], ats: [] };
    for (let i = 0; i < events.length; i++) this.observe(events[i], nows[i], ats[i]);
  };

  /** Counts `event`, which arrived at `now` (ms since the epoch) and `at` (performance.now()). */
  private observe(event: GatewayEvent, now: number, at: number): void {
    switch (event.type) {
      case "turn.started": {
        const { provider, model } = names(event.provider, event.upstream_model);
        const served = this.series.get(seriesId(provider, model));
        const series = served ?? this.seriesOf(provider, NOT_SERVED);
        this.both(series, now, (tally) => tally.requests++);
        if (typeof event.turn_id !== "string") return;
        const upstreamMs = typeof event.upstream_ms === "number" && event.upstream_ms >= 0 ? event.upstream_ms : 0;
        const candidate = served ? undefined : { provider, model, startedNow: now };
        this.openTurns.open(event.turn_id, { series, sentAt: at - upstreamMs, awaitingReasoning: true, candidate });
        return;
      }
      case "reasoning.delta": {
        const turn = this.openTurns.get(event.turn_id);
        if (!turn?.awaitingReasoning) return;
        turn.awaitingReasoning = false;
        const ms = at - turn.sentAt;
        // counted where the turn ends up: its own row if it completes
        if (turn.candidate) turn.candidate.firstReasoning = { ms, now };
        else this.both(turn.series, now, (tally) => tally.firstReasoning.record(ms));
        return;
      }
      case "turn.completed": {
        const turn = this.openTurns.close(event.turn_id);
        if (!turn) return;
        if (turn.candidate) this.served(turn);
        const ms = at - turn.sentAt;
        const usage = event.usage;
        const tokensIn = typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : 0;
        const tokensOut = typeof usage?.completion_tokens === "number" ? usage.completion_tokens : 0;
        return this.both(turn.series, now, (tally) => {
          tally.completed++;
          tally.completion.record(ms);
          tally.tokensIn += tokensIn;
          tally.tokensOut += tokensOut;
        });
      }
      case "turn.failed": {
        const turn = this.openTurns.close(event.turn_id);
        if (!turn) return;
        const reasoning = turn.candidate?.firstReasoning;
        if (reasoning) this.both(turn.series, reasoning.now, (tally) => tally.firstReasoning.record(reasoning.ms));
        const { code, status } = errorOf(event);
        return this.both(turn.series, now, (tally) => {
          tally.failed++;
          tally.countError(code, status);
        });
      }
      case "upstream.failed": {
        // refused before any turn started: a request, and its error
        const { code, status } = errorOf(event);
        return this.both(this.servedOrNot(event.provider, event.upstream_model), now, (tally) => {
          tally.requests++;
          tally.failed++;
          tally.countError(code, status);
        });
      }
      case "verdict.recorded":
        return this.both(this.servedOrNot(event.provider, event.model), now, (tally) => tally.verdicts++);
      case "routes.reloaded":
        this.reloads.fine.at(now).reloaded++;
        this.reloads.coarse.at(now).reloaded++;
        return;
      case "routes.rejected":
        this.reloads.fine.at(now).rejected++;
        this.reloads.coarse.at(now).rejected++;
        return;
    }
  }

  private both(series: Series, now: number, count: (tally: Tally) => void): void {
    count(series.fine.at(now));
    count(series.coarse.at(now));
  }

  /**
   * A turn of a model not served before completed: the model gets its row,
   * and what its turn counted in the provider's NOT_SERVED row moves there.
   */
  private served(turn: OpenTurn): void {
    const candidate = turn.candidate!;
    const series = this.seriesOf(candidate.provider, candidate.model);
    if (series !== turn.series) {
      this.both(turn.series, candidate.startedNow, (tally) => tally.requests--);
      this.both(series, candidate.startedNow, (tally) => tally.requests++);
      turn.series = series;
    }
    const reasoning = candidate.firstReasoning;
    if (reasoning) this.both(series, reasoning.now, (tally) => tally.firstReasoning.record(reasoning.ms));
  }

  /** The row of a model its upstream has served, or its provider's NOT_SERVED row. */
  private servedOrNot(provider: unknown, model: unknown): Series {
    const shownNames = names(provider, model);
    return this.series.get(seriesId(shownNames.provider, shownNames.model)) ?? this.seriesOf(shownNames.provider, NOT_SERVED);
  }

  /** Drops the rows with nothing in the day's window, so the table holds what the panel can show. */
  private dropIdle(now: number): void {
    for (const [id, series] of this.series) {
      if (series.coarse.last(now, COARSE_SLOTS).every(({ value }) => value === undefined)) this.series.delete(id);
    }
  }

  private seriesOf(providerName: string, modelName: string): Series {
    const id = seriesId(providerName, modelName);
    let series = this.series.get(id);
    if (series) return series;
    if (this.series.size >= MAX_SERIES && providerName !== OTHER) return this.seriesOf(OTHER, OTHER);
    series = {
      provider: providerName,
      model: modelName,
      fine: new TimeRing(FINE_STEP_MS, FINE_SLOTS, () => new Tally()),
      coarse: new TimeRing(COARSE_STEP_MS, COARSE_SLOTS, () => new Tally()),
    };
    this.series.set(id, series);
    return series;
  }
}

function names(provider: unknown, model: unknown): { provider: string; model: string } {
  return { provider: provider === undefined ? "unknown" : shown(provider), model: model === undefined ? "unknown" : shown(model) };
}

function seriesId(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

/** The code (and upstream status) a failure event carries; `unknown` when it carries none. */
function errorOf(event: GatewayEvent): { code: string; status: number | null } {
  const error = event.error;
  return {
    code: typeof error?.code === "string" ? error.code : "unknown",
    status: typeof error?.status === "number" ? error.status : null,
  };
}
