import { inject, injectable } from "tsyringe";
import { sessionName } from "../conversation/session-scope.js";
import { EVENT_BUS, LOGGER, OPTIONS, PLUGIN_HOST, ROUTE_SOURCE, STORAGE } from "../foundation/container/tokens.js";
import { TurnAccumulator, type AssistantTurn } from "../routing/carriers/turn-accumulator.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import { GatewayError, upstreamError } from "../foundation/errors/gateway-error.js";
import { withKey, type EventBus } from "../foundation/event-bus/event-bus.js";
import type { Logger } from "../foundation/logging/logger.js";
import {
  partsOf,
  type CarriedAnswerHead,
  type CarriedRequest,
  type CarrierPolicy,
  type ChatRequest,
  type ProviderPlugin,
  type StreamItem,
  type StreamPart,
} from "../providers/contract.js";
import type { PluginHost } from "../providers/plugin-host.js";
import type { RouteSource } from "../routing/routes/route-source.js";
import { routeMatchOf, routeNumber, type ResolvedModel, type RouteTable } from "../routing/routes/route-table.js";
import type { Storage } from "../storage/storage.js";
import type { NewTurn, ReplaySource } from "../storage/turns.js";
import type { Cancellation } from "../providers/upstream/cancellation.js";
import { callWithRetry, type CallTarget, type RetryContext } from "./call-with-retry.js";
import { planTurn, type PlanningContext, type TurnPlan } from "./plan-turn.js";
import { checkedNativeRecord, promptOf, turnRecord, type TurnOrigin } from "./record-turn.js";
import { newId } from "./sessions/session-id.js";
import { matchedMessages, replayDecision, TurnClock } from "./turn-audit.js";
import type { ReplayDecision, TurnAudit } from "../storage/session-history.js";
import { traceCommit, traceReplay } from "../foundation/tracing/trace-hooks.js";

/** Who is asking, and how. */
export interface RequestContext {
  /** The data scope of the request's key (Caller.keyHash): the session, its fingerprints and turns are filed under it. */
  readonly keyHash: string;
  /**
   * The stored id of the session the request names (its X-Session-Id under
   * the key's scope, see storedSessionId, or a stored response's session), checked.
   */
  readonly explicitSession: string | undefined;
  /** The scope a new session's id is filed under (sessionScopeOf the caller). */
  readonly sessionScope: string | undefined;
  /**
   * The client says it compacted its history (Claude Code's
   * `x-claude-code-context-compacted`): the session's earlier turns are no
   * longer this conversation's by position, only by what they say.
   */
  readonly compacted?: boolean;
  readonly stream: boolean;
  /** Fires when the client goes away: the upstream call is aborted. */
  readonly cancellation: Cancellation;
  /**
   * The same request again, parsed anew from the bytes the client sent, for
   * the rare unknown-field retry: with it the turn lets go of the parsed
   * history once its first call is built (docs/performance.md#what-a-waiting-turn-holds).
   */
  readonly reread?: () => ChatRequest;
  /** Told the session as soon as it is known, before the upstream is called: every answer, a failed one too, can name it. */
  readonly onSession?: (sessionId: string) => void;
  /**
   * Carriers the client handed back sealed (an envelope it was given with an
   * earlier turn, docs/sessions-and-replay.md#envelopes), opened, by index
   * of the assistant message they belong to: replayed for that message in
   * place of whatever the store holds.
   */
  readonly sealed?: ReadonlyMap<number, ReplaySource>;
  /**
   * Between two batches of a streamed answer: a promise while the client is
   * behind (the next batch is read once it has caught up; it rejects when
   * the client stays stalled too long), undefined when it keeps up.
   */
  readonly pace?: () => Promise<void> | undefined;
  /**
   * The client's request as it sent it, when its wire is the route's
   * upstream's: carried, not rebuilt (docs/architecture.md#two-paths). The
   * turn request beside it is what the session, replay and the stored
   * prompt are found from.
   */
  readonly carried?: CarriedRequest;
  /**
   * The request's route as its door looked it up, with the table it read it
   * from: the turn keeps that table to its end instead of looking the model
   * up again. Without it the turn looks it up in the table in force.
   */
  readonly route?: DoorRoute;
}

/** A route a door has looked up: the table in force when it did, and the model's route in it. */
export interface DoorRoute {
  readonly table: RouteTable;
  readonly resolved: ResolvedModel;
}

/**
 * One assistant turn in flight. Its `batches` are the upstream's answer in
 * canonical form, the parts of one network read together (reasoning already
 * withheld when the request disabled it); every part is folded into the turn
 * and published once on the event bus.
 * `complete()` makes the turn durable; call it before telling the client
 * the turn is done.
 */
export interface TurnRun {
  readonly sessionId: string;
  readonly turnId: string;
  /** The model name the client asked for. */
  readonly model: string;
  readonly batches: AsyncIterable<readonly StreamPart[]>;
  /** A carried turn's answer status and headers, as the upstream sent them (its bytes are the batches' `answer-bytes` parts). */
  readonly head: CarriedAnswerHead | undefined;
  complete(): Promise<AssistantTurn>;
  /** The turn as it was stored, every carrier verbatim; undefined until `complete` resolved. */
  readonly stored: NewTurn | undefined;
  fail(error: unknown): void;
}

/**
 * The request path shared by chat completions and the Responses API, as a
 * pipeline: plan the turn (planTurn: route, session, verdicts, replay, the
 * first call), call it with the one-retry fallback (callWithRetry), then
 * relay the answer and record the turn (turnRecord). How a finished turn is
 * made durable is the storage's to decide.
 */
@injectable()
export class ChatService {
  private readonly planning: PlanningContext;
  private readonly retrying: RetryContext;
  /** Bound once: `start` continues with it, so no closure per request holds the request. */
  private readonly callPlanned = (prepared: PreparedTurn): Promise<TurnRun> => this.call(prepared);

  constructor(
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(PLUGIN_HOST) readonly plugins: PluginHost,
    @inject(EVENT_BUS) private readonly bus: EventBus,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OPTIONS) options: GatewayOptions,
    @inject(STORAGE) private readonly storage: Storage,
  ) {
    this.planning = { storage, registry: plugins.registry, env: options.env };
    this.retrying = { storage, bus, log };
  }

  /**
   * Finds the session, replays stored carriers, and calls the upstream; on an
   * unknown-field rejection records the verdict and retries exactly once
   * (docs/sessions-and-replay.md#unknown-field-fallback-verdicts). Throws a GatewayError (404, upstream 4xx…) before anything
   * reached the client.
   */
  start(request: ChatRequest, context: RequestContext): Promise<TurnRun> {
    // not async itself: the request (the whole history) is held by `prepare` only until the first call is built
    return this.prepare(request, context).then(this.callPlanned);
  }

  /** Everything before the first upstream call: route, then the plan (session, verdicts, replay, the call itself). */
  private async prepare(request: ChatRequest, context: RequestContext): Promise<PreparedTurn> {
    const table = context.route?.table ?? this.routes.current; // this request keeps this table to its end
    const resolved = context.route?.resolved ?? table.resolveModel(request.model);
    if (!resolved) throw new GatewayError("model_not_found", `The model '${request.model}' does not exist in routes.yaml`, "model");
    const plugin = this.plugins.instance(resolved.provider.plugin);
    if (!plugin) throw new GatewayError("provider_not_configured", `plugin "${resolved.provider.plugin}" is not loaded`);
    const policy = table.policyFor(resolved.provider, resolved.upstreamModel);
    const routeMatch = routeMatchOf(table, policy);
    const plan = await planTurn(
      this.planning,
      request,
      { resolved, policy },
      {
        keyHash: context.keyHash,
        explicit: context.explicitSession,
        sessionScope: context.sessionScope,
        compacted: context.compacted,
        stream: context.stream,
        cancellation: context.cancellation,
        reread: context.reread,
        onSession: context.onSession,
        sealed: context.sealed,
        carried: context.carried,
      },
    );
    const { sessionId, key, match, effective } = plan;
    const turnId = newId("turn_");
    traceReplay(context.cancellation, turnId, plan, request.messages);
    if (this.log.isLevelEnabled("debug"))
      this.log.debug(
        {
          session_id: sessionId,
          provider: key.provider,
          model: key.model,
          route: routeNumber(policy),
          effective,
          matched: match.matched,
          attached: plan.firstAttached,
          from_envelopes: context.sealed?.size ?? 0,
        },
        "carriers attached",
      );
    return {
      plan,
      plugin,
      pluginName: resolved.provider.plugin,
      policy,
      routeMatch,
      key,
      sessionId,
      parentTurnId: match.parentTurnId,
      depth: match.matched.assistant + 1,
      keyHash: context.keyHash,
      turnId,
      clientModel: request.model,
      // the messages that asked for this turn: all a finished turn keeps of the request
      prompt: promptOf(request.messages),
      reasoningEnabled: request.model_options?.reasoning?.enabled !== false,
      pace: context.pace,
      matched: matchedMessages(match, context.sealed),
    };
  }

  /** The upstream call (and its one retry), then the turn as it streams. */
  private async call(prepared: PreparedTurn): Promise<TurnRun> {
    const { plugin, policy, key, sessionId, turnId, clientModel, reasoningEnabled, keyHash } = prepared;
    let outcome;
    const calledAt = performance.now();
    try {
      outcome = await callWithRetry(this.retrying, prepared);
    } catch (error) {
      this.publishRefusal(prepared, error, calledAt);
      throw error;
    }
    const { result, effective } = outcome;
    if (!result.ok) {
      this.log.warn({ provider: key.provider, model: key.model, status: result.status }, "upstream rejected the request");
      const error = upstreamError(result.status, result.body, result.headers); // X-Session-Id is already set (RequestContext.onSession)
      this.publishRefusal(prepared, error, calledAt);
      throw error;
    }

    const upstreamMs = performance.now() - outcome.sentAt;
    const clock = new TurnClock(outcome.sentAt, upstreamMs);
    const replay = replayDecision(prepared.plan, policy, prepared.matched, outcome);
    let seq = 0;
    // events name the session as its client does (X-Session-Id); the key they belong to travels beside them
    const sessionShown = sessionName(sessionId);
    const publish = (type: Parameters<EventBus["publish"]>[0]["type"], fields: Record<string, unknown>) =>
      this.bus.publish(withKey({ type, session_id: sessionShown, turn_id: turnId, seq: seq++, ...fields }, keyHash));
    publish("turn.started", {
      model: clientModel,
      provider: key.provider,
      upstream_model: key.model,
      route: routeNumber(policy),
      route_match: prepared.routeMatch,
      fields: effective,
      upstream_ms: upstreamMs,
    });

    const accumulator = new TurnAccumulator(plugin.mergeNative);
    const run: TurnRun = {
      sessionId,
      turnId,
      model: clientModel,
      head: result.head,
      stored: undefined,
      batches: relay(result.parts, { accumulator, reasoningEnabled, bus: this.bus, publish, pace: prepared.pace, clock }),
      complete: async () => {
        const turn = accumulator.finish();
        const native = checkedNativeRecord(this.plugins.registry, this.log, turn.nativeRecord, prepared.pluginName, sessionId);
        const record = turnRecord(prepared, turn, native, { route: routeNumber(policy), route_match: prepared.routeMatch, timings: clock.timings(), replay });
        // durable with every carrier verbatim before the client is told the turn is done
        await traceCommit(turnId, this.storage.turns.save(record));
        (run as { stored: NewTurn | undefined }).stored = record;
        // stored in full above; only the client's view loses the reasoning it asked not to see
        if (!reasoningEnabled) turn.reasoningText = "";
        for (const toolCall of turn.toolCalls) publish("tool_call", { id: toolCall.id, name: toolCall.function.name, arguments: toolCall.function.arguments });
        publish("turn.completed", { usage: turn.usage ?? null, finish_reason: turn.finishReason });
        return turn;
      },
      fail: (error) => {
        publish("turn.failed", {
          error: { message: error instanceof Error ? error.message : String(error), ...(error instanceof GatewayError ? { code: error.code } : {}) },
        });
      },
    };
    return run;
  }

  /** `upstream.failed`: the upstream refused the request or never answered it, so no turn started (the provider panel counts it). */
  private publishRefusal(prepared: PreparedTurn, error: unknown, calledAt: number): void {
    if (!this.bus.wants("upstream.failed")) return;
    const { key, sessionId, clientModel, keyHash } = prepared;
    const gatewayError = error instanceof GatewayError ? error : undefined;
    this.bus.publish(
      withKey(
        {
          type: "upstream.failed",
          session_id: sessionName(sessionId),
          model: clientModel,
          provider: key.provider,
          upstream_model: key.model,
          error: {
            code: gatewayError?.code ?? "internal_error",
            status: gatewayError?.status ?? 500,
            message: error instanceof Error ? error.message : String(error),
          },
          upstream_ms: performance.now() - calledAt,
        },
        keyHash,
      ),
    );
  }
}

/** What `relay` folds a turn's answer into and publishes it on. */
interface RelayTarget {
  readonly accumulator: TurnAccumulator;
  readonly reasoningEnabled: boolean;
  readonly bus: EventBus;
  readonly publish: (type: "reasoning.delta" | "content.delta", fields: Record<string, unknown>) => void;
  /** RequestContext.pace: the client's backpressure. */
  readonly pace: (() => Promise<void> | undefined) | undefined;
  /** When the first reasoning and answer text arrived. */
  readonly clock: TurnClock;
}

/**
 * The upstream's answer as the turn's batches: every part folded into the
 * turn, deltas published, reasoning withheld when the request disabled it.
 * Declared at module level on purpose: one generator for every turn, so
 * no turn's context outlives it (docs/performance.md#what-a-waiting-turn-holds).
 */
async function* relay(parts: AsyncIterable<StreamItem>, turn: RelayTarget): AsyncIterable<readonly StreamPart[]> {
  const { accumulator, reasoningEnabled, bus, publish, pace, clock } = turn;
  let reasoningSeen = false;
  let contentSeen = false;
  for await (const item of parts) {
    const batch = partsOf(item);
    let withheld = false;
    for (const part of batch) {
      accumulator.add(part);
      if (part.type === "reasoning-delta") {
        if (!reasoningSeen) clock.firstReasoning = clock.sinceSent();
        if (!reasoningEnabled) withheld = true;
        else if (bus.wants("reasoning.delta", reasoningSeen)) publish("reasoning.delta", { text: part.text });
        reasoningSeen = true;
      } else if (part.type === "text-delta") {
        if (!contentSeen) clock.firstContent = clock.sinceSent();
        if (bus.wants("content.delta", contentSeen)) publish("content.delta", { text: part.text });
        contentSeen = true;
      }
    }
    yield withheld ? batch.filter((part) => part.type !== "reasoning-delta") : batch;
    // a client that is behind is waited for before more is read: the upstream is paused meanwhile (BatchQueue)
    const behind = pace?.();
    if (behind) await behind;
  }
}

/** A turn whose first upstream call is built: what the rest of the turn needs, and no more of the client's request. */
interface PreparedTurn extends CallTarget, TurnOrigin {
  readonly plan: TurnPlan;
  readonly plugin: ProviderPlugin;
  readonly policy: CarrierPolicy;
  /** The route's `match` as routes.yaml wrote it (routeMatchOf). */
  readonly routeMatch: TurnAudit["route_match"];
  readonly reasoningEnabled: boolean;
  readonly pace: (() => Promise<void> | undefined) | undefined;
  /** The request's known assistant messages and the keys that found them, for the turn's record. */
  readonly matched: ReplayDecision["matched"];
}
