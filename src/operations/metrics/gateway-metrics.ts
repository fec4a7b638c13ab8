import { inject, injectable } from "tsyringe";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type LabelValues } from "prom-client";
import { EVENT_BUS, EVENT_FEED, EVENT_HUB, KEY_RING, UPSTREAM_HTTP } from "../../foundation/container/tokens.js";
import type { EventFeed } from "../../events/event-feed.js";
import { keyOf, type EventBus, type GatewayEvent, type GatewayEventType } from "../../foundation/event-bus/event-bus.js";
import { OpenTurns } from "../../foundation/event-bus/open-turns.js";
import type { EventHub } from "../../events/event-hub.js";
import type { KeyRing } from "../../http/keys/key-ring.js";
import type { DeadlineCuts } from "../../providers/upstream/deadline-cuts.js";
import { shown } from "../../foundation/util/shown.js";

/** What http-server reports per finished request. */
export interface RequestRecord {
  method: string;
  /** The matched route's path, never the raw URL (bounded label values). */
  route: string;
  status: number;
  /** The name of the key the request authenticated with; "" when none did. */
  key: string;
}

interface OpenTurn {
  readonly provider: string;
  readonly started: number;
  awaitingReasoning: boolean;
}
/** The events metrics count, besides each turn's first reasoning delta. */
const TURN_AND_GATEWAY_EVENTS: GatewayEventType[] = ["turn.started", "turn.completed", "turn.failed", "verdict.recorded", "routes.reloaded", "routes.rejected"];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/**
 * Metric folding in batches (docs/performance.md#the-requests-edges):
 * events and request records wait until this
 * many are pending (about 60 requests' worth) or until the metrics are
 * read. Handled one request at a time, this code and prom-client's are cold
 * each time (prom-client's label hashing and bucket search took 1.5–3.5 µs
 * an observation inside the gateway, against 0.2–0.4 µs in a loop); a batch
 * runs them warm. An event's time is taken when it arrives, so durations
 * are the same; each metric gets its observations in the order they were
 * made. Bounds the memory held to this many small objects.
 */
const FOLD_BATCH = 256;

/**
 * Prometheus metrics (docs/events.md#get-metrics), one Registry per gateway so two gateways in
 * one process (tests) never share counters. Everything but request counts is
 * derived from the event bus, of which metrics take only a turn's first
 * reasoning delta, never every streamed chunk.
 */
@injectable()
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status" | "key">;
  private readonly tokens: Counter<"key" | "kind">;
  private readonly upstreamLatency: Histogram<"provider">;
  private readonly firstReasoning: Histogram<"provider">;
  private readonly turnDuration: Histogram<"provider" | "outcome">;
  private readonly retries: Counter<"provider">;
  private readonly verdicts: Counter<"provider" | "field">;
  private readonly reloads: Counter<"result">;
  /** turn_id → provider and start time of every open turn, and whether it still awaits its first reasoning token. */
  private readonly openTurns = new OpenTurns<OpenTurn>();
  /**
   * Events not yet observed, each with performance.now() when it arrived,
   * and observations not yet folded into their metrics (three slots each:
   * metric, labels, value). A turn's events arrive before its answer ends
   * (its start, first reasoning token, end); none of their work needs to be
   * done before the client saw the end. Both are handled in batches of
   * FOLD_BATCH, once the turn of the event loop that filled one is done
   * (after its writes), and always when any of these metrics is read
   * (`collect`): a read sees every event and request before it.
   */
  private arrivals: { events: GatewayEvent[]; ats: number[] } = { events: [], ats: [] };
  private pending: (Histogram<string> | Counter<string> | LabelValues<string> | number)[] = [];
  private foldScheduled: NodeJS.Immediate | undefined;
  private defaultsCollected = false;
  private readonly unsubscribe: () => void;
  private readonly stopWatchingReasoning: () => void;

  constructor(
    @inject(EVENT_BUS) private readonly bus: EventBus,
    @inject(EVENT_HUB) hub: EventHub,
    @inject(KEY_RING) private readonly keys: KeyRing,
    @inject(EVENT_FEED) feed?: EventFeed,
    @inject(UPSTREAM_HTTP) upstream?: { readonly deadlineCuts: DeadlineCuts },
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: "carrierd_http_requests_total",
      help: "HTTP requests by method, route, status and access key name",
      labelNames: ["method", "route", "status", "key"],
      registers,
      collect: this.fold,
    });
    this.tokens = new Counter({
      name: "carrierd_tokens_total",
      help: "Tokens of completed turns as the upstream reported them, by access key name and kind (prompt, completion)",
      labelNames: ["key", "kind"],
      registers,
      collect: this.fold,
    });
    this.upstreamLatency = new Histogram({
      name: "carrierd_upstream_latency_seconds",
      help: "Time from sending a request upstream until the upstream answered (response headers)",
      labelNames: ["provider"],
      buckets: LATENCY_BUCKETS,
      registers,
      collect: this.fold,
    });
    this.firstReasoning = new Histogram({
      name: "carrierd_time_to_first_reasoning_token_seconds",
      help: "Time from sending a request upstream until its first reasoning token",
      labelNames: ["provider"],
      buckets: LATENCY_BUCKETS,
      registers,
      collect: this.fold,
    });
    this.turnDuration = new Histogram({
      name: "carrierd_turn_duration_seconds",
      help: "Time from sending a request upstream to the end of its turn",
      labelNames: ["provider", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
      collect: this.fold,
    });
    this.retries = new Counter({
      name: "carrierd_upstream_retries_total",
      help: "Requests retried upstream without a field the upstream rejected",
      labelNames: ["provider"],
      registers,
      collect: this.fold,
    });
    this.verdicts = new Counter({
      name: "carrierd_verdicts_recorded_total",
      help: "Unknown-field verdicts recorded, by provider and field",
      labelNames: ["provider", "field"],
      registers,
      collect: this.fold,
    });
    this.reloads = new Counter({
      name: "carrierd_route_reloads_total",
      help: "routes.yaml reloads, by result (reloaded, rejected)",
      labelNames: ["result"],
      registers,
      collect: this.fold,
    });
    new Gauge({
      name: "carrierd_websocket_subscribers",
      help: "Authenticated WebSocket event stream connections",
      registers,
      collect() {
        this.set(hub.subscriberCount);
      },
    });
    new Counter({
      name: "carrierd_websocket_dropped_events_total",
      help: "Events not sent to a WebSocket subscriber because it was behind",
      registers,
      collect() {
        this.reset();
        this.inc(hub.droppedEvents);
      },
    });
    new Counter({
      name: "carrierd_websocket_slow_closes_total",
      help: "WebSocket subscribers closed with 1013 because they stayed behind",
      registers,
      collect() {
        this.reset();
        this.inc(hub.slowClosed);
      },
    });
    new Counter({
      name: "carrierd_events_dropped_total",
      help: "Events this instance could not write to the shared event stream (events: redis), by reason: disconnected, queue_full, write_failed",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(feed?.dropped() ?? {})) this.inc({ reason }, count);
      },
    });
    new Counter({
      name: "carrierd_key_lookups_total",
      help: "Bearer keys this gateway did not hold, by what became of them: found in the store, unknown there, remembered as unknown, refused unread (too many waiting), failed (store down)",
      labelNames: ["result"],
      registers,
      collect() {
        this.reset();
        for (const [result, count] of Object.entries(keys.lookups)) this.inc({ result }, count);
      },
    });
    new Counter({
      name: "carrierd_upstream_deadline_cuts_total",
      help: "Upstream requests cut because a routes.yaml deadline passed, by provider and deadline (first_byte, idle, total)",
      labelNames: ["provider", "deadline"],
      registers,
      collect() {
        this.reset();
        for (const { provider, deadline, count } of upstream?.deadlineCuts.entries() ?? []) this.inc({ provider, deadline }, count);
      },
    });
    this.reloads.inc({ result: "reloaded" }, 0);
    this.reloads.inc({ result: "rejected" }, 0);
    this.unsubscribe = bus.subscribe((event) => this.arrived(event), TURN_AND_GATEWAY_EVENTS, { untimed: true });
    // only a turn's first reasoning delta: a long reasoning stream with no WebSocket subscriber is not turned into bus events for metrics
    this.stopWatchingReasoning = bus.subscribe((event) => this.arrived(event), ["reasoning.delta"], { firstOfTurn: true, untimed: true });
  }

  /** Called by the HTTP server when a response has finished. */
  recordRequest(record: RequestRecord): void {
    this.later(this.requests, { method: record.method, route: record.route, status: String(record.status), key: record.key }, 1);
  }

  /** The text exposition. Process metrics are registered on the first scrape, so gateways nobody scrapes (tests) run no sampling timers. */
  async render(): Promise<{ contentType: string; body: string }> {
    if (!this.defaultsCollected) {
      this.defaultsCollected = true;
      collectDefaultMetrics({ register: this.registry });
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  close(): void {
    this.fold();
    this.unsubscribe();
    this.stopWatchingReasoning();
    this.openTurns.clear();
  }

  private arrived(event: GatewayEvent): void {
    this.arrivals.events.push(event);
    this.arrivals.ats.push(performance.now());
    this.foldWhenFull();
  }

  /** Observes `event`, which arrived at `at` (performance.now()). */
  private observe(event: GatewayEvent, at: number): void {
    switch (event.type) {
      case "reasoning.delta": {
        const turn = this.openTurns.get(event.turn_id);
        if (turn?.awaitingReasoning) {
          turn.awaitingReasoning = false;
          this.later(this.firstReasoning, { provider: turn.provider }, (at - turn.started) / 1000);
        }
        return;
      }
      case "turn.started": {
        const provider = shown(event.provider ?? "unknown");
        const upstreamMs = typeof event.upstream_ms === "number" && event.upstream_ms >= 0 ? event.upstream_ms : undefined;
        if (upstreamMs !== undefined) this.later(this.upstreamLatency, { provider }, upstreamMs / 1000);
        // time to first reasoning counts from when the request went upstream, not from its answer's headers
        if (typeof event.turn_id !== "string") return;
        this.openTurns.open(event.turn_id, { provider, started: at - (upstreamMs ?? 0), awaitingReasoning: true });
        return;
      }
      case "turn.completed":
        this.countTokens(event);
        return this.endTurn(event, "completed", at);
      case "turn.failed":
        return this.endTurn(event, "failed", at);
      case "verdict.recorded": {
        const provider = shown(event.provider ?? "unknown");
        const fields = Array.isArray(event.fields) ? event.fields : [event.field];
        for (const field of fields) this.later(this.verdicts, { provider, field: String(field ?? "unknown") }, 1);
        if (event.retried !== false) this.later(this.retries, { provider }, 1);
        return;
      }
      case "routes.reloaded":
        return this.reloads.inc({ result: "reloaded" });
      case "routes.rejected":
        return this.reloads.inc({ result: "rejected" });
    }
  }

  private countTokens(event: GatewayEvent): void {
    const usage = event.usage;
    if (!usage) return;
    const keyHash = keyOf(event);
    const key = (keyHash !== undefined ? this.keys.nameOf(keyHash) : undefined) ?? "";
    if (typeof usage.prompt_tokens === "number" && usage.prompt_tokens > 0) this.later(this.tokens, { key, kind: "prompt" }, usage.prompt_tokens);
    if (typeof usage.completion_tokens === "number" && usage.completion_tokens > 0)
      this.later(this.tokens, { key, kind: "completion" }, usage.completion_tokens);
  }

  private endTurn(event: GatewayEvent, outcome: "completed" | "failed", at: number): void {
    if (typeof event.turn_id !== "string") return;
    const turn = this.openTurns.close(event.turn_id);
    if (!turn) return;
    this.later(this.turnDuration, { provider: turn.provider, outcome }, (at - turn.started) / 1000);
  }

  /** A histogram's observation or a counter's increment, folded in by `fold`. */
  private later<L extends string>(metric: Histogram<L> | Counter<L>, labels: LabelValues<L>, value: number): void {
    this.pending.push(metric, labels, value);
    this.foldWhenFull();
  }

  /** A full batch is folded once this turn of the event loop is done (after its writes). */
  private foldWhenFull(): void {
    if (this.arrivals.events.length + this.pending.length / 3 >= FOLD_BATCH) this.foldScheduled ??= setImmediate(this.fold);
  }

  private readonly fold = (): void => {
    const { events, ats } = this.arrivals;
    if (events.length > 0) {
      this.arrivals = { events: [], ats: [] };
      for (let i = 0; i < events.length; i++) this.observe(events[i], ats[i]);
    }
    if (this.foldScheduled) clearImmediate(this.foldScheduled);
    this.foldScheduled = undefined;
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    for (let i = 0; i < pending.length; i += 3) {
      const metric = pending[i] as Histogram<string> | Counter<string>;
      const labels = pending[i + 1] as LabelValues<string>;
      const value = pending[i + 2] as number;
      if (metric instanceof Histogram) metric.observe(labels, value);
      else metric.inc(labels, value);
    }
  };
}
