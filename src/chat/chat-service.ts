import { inject, injectable } from "tsyringe";
import { EVENT_BUS, LOGGER, OPTIONS, PLUGIN_HOST, ROUTE_SOURCE, STORE, VERDICT_STORE } from "../container/tokens.js";
import { replayOptOut } from "../carriers/replay-opt-out.js";
import { TurnAccumulator, type AssistantTurn } from "../carriers/turn-accumulator.js";
import type { GatewayOptions } from "../config/options.js";
import { GatewayError, upstreamError } from "../errors/gateway-error.js";
import type { EventBus } from "../bus/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { partsOf, type CarrierField, type CarrierPolicy, type ChatMessage, type ChatRequest, type JsonObject, type ProviderPlugin, type StreamItem, type StreamPart, type UpstreamResult } from "../plugins/contract.js";
import type { PluginHost } from "../plugins/plugin-host.js";
import type { RouteSource } from "../routes/route-source.js";
import { routeNumber } from "../routes/route-table.js";
import { fingerprintOf } from "../sessions/fingerprint.js";
import { keyScope } from "../sessions/key-scope.js";
import { findSession, type SessionMatch } from "../sessions/session-finder.js";
import type { SessionStore } from "../store/session-store.js";
import type { VerdictStore } from "../verdicts/verdict-store.js";
import { fieldsToReject } from "../verdicts/unknown-field.js";
import { recordRejection, rejectedFor } from "../verdicts/record-rejection.js";
import type { Cancellation } from "../upstream/cancellation.js";
import { UpstreamRequestBuilder, type BuiltCall } from "./upstream-request.js";
import { checkSessionId, newId } from "./session-id.js";

/** Who is asking, and how. */
export interface RequestContext {
  /** The client's X-Session-Id, when it sent one. */
  readonly sessionHeader: string | undefined;
  readonly stream: boolean;
  /** Fires when the client goes away: the upstream call is aborted. */
  readonly cancellation: Cancellation;
  /**
   * The same request again, parsed anew from the bytes the client sent. With
   * it the turn lets go of the parsed history once its first upstream call
   * is built, and reads it again only for the rare retry (SPEC §6): under
   * load a turn waits tens of milliseconds for its upstream answer, and a
   * history held that long is copied by every young-generation GC meanwhile.
   */
  readonly reread?: () => ChatRequest;
  /** Told the session as soon as it is known, before the upstream is called: every answer, a failed one too, can name it (SPEC §4). */
  readonly onSession?: (sessionId: string) => void;
  /**
   * Between two batches of a streamed answer: a promise while the client is
   * behind (the next batch is read once it has caught up; it rejects when
   * the client stays stalled too long), undefined when it keeps up.
   */
  readonly pace?: () => Promise<void> | undefined;
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
  complete(): Promise<AssistantTurn>;
  fail(error: unknown): void;
}

/** The request path shared by chat completions and the Responses API. */
@injectable()
export class ChatService {
  /** Fingerprint matching is scoped to the gateway's key (SPEC §4); hashed once, not per request. */
  private readonly keyHash: string;
  /** Turns from their upstream call until their answer is read through or given up: a turn ending alone is saved through the journal. */
  private running = 0;

  constructor(
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(PLUGIN_HOST) private readonly plugins: PluginHost,
    @inject(EVENT_BUS) private readonly bus: EventBus,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(STORE) private readonly store: SessionStore,
    @inject(VERDICT_STORE) private readonly verdicts: VerdictStore,
  ) {
    this.keyHash = keyScope(options.apiKey);
  }

  /**
   * Finds the session, replays stored carriers, and calls the upstream; on an
   * unknown-field rejection records the verdict and retries exactly once
   * (SPEC §6). Throws a GatewayError (404, upstream 4xx…) before anything
   * reached the client.
   */
  start(request: ChatRequest, context: RequestContext): Promise<TurnRun> {
    // not async itself: the request (the whole history) stays in this frame only until the first call is built
    let turn: PreparedTurn;
    try {
      turn = this.prepare(request, context);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.call(turn);
  }

  /** Everything before the first upstream call, synchronously: route, session, replay, the call itself. */
  private prepare(request: ChatRequest, context: RequestContext): PreparedTurn {
    const table = this.routes.current; // this request keeps this table to its end
    const resolved = table.resolveModel(request.model);
    if (!resolved) throw new GatewayError("model_not_found", `The model '${request.model}' does not exist in routes.yaml`, "model");
    const plugin = this.plugins.instance(resolved.provider.plugin);
    if (!plugin) throw new GatewayError("provider_not_configured", `plugin "${resolved.provider.plugin}" is not loaded`);
    const policy = table.policyFor(resolved.provider, resolved.upstreamModel);
    const explicit = context.sessionHeader !== undefined ? checkSessionId(context.sessionHeader) : undefined;
    const optOut = replayOptOut(request);
    const match = findSession(this.store, this.keyHash, request.messages, explicit);
    const sessionId = match.sessionId ?? newId("sess_");
    context.onSession?.(sessionId);
    const key = { provider: resolved.provider.id, host: resolved.provider.host, model: resolved.upstreamModel };
    const builderOf = (client: ChatRequest) => new UpstreamRequestBuilder(this.store, this.plugins.registry, client, resolved, policy, match, context, this.options.env);
    const builder = builderOf(request);
    const rejected = rejectedFor(this.verdicts, this.store, key, match.sessionId);
    const effective = policy.fields.filter((field) => !rejected.includes(field) && !optOut.includes(field));
    const first = builder.build(effective);
    if (this.log.isLevelEnabled("debug")) this.log.debug({ session_id: sessionId, provider: key.provider, model: key.model, route: routeNumber(policy), effective, matched: match.matched, attached: first.attached }, "carriers attached");
    return {
      plugin,
      pluginName: resolved.provider.plugin,
      policy,
      key,
      match,
      sessionId,
      turnId: newId("turn_"),
      clientModel: request.model,
      // the messages that asked for this turn: all a finished turn keeps of the request
      prompt: promptOf(request.messages),
      reasoningEnabled: request.model_options?.reasoning?.enabled !== false,
      pace: context.pace,
      rejected,
      effective,
      first,
      // with `reread`, nothing here holds the parsed request: no closure of this scope captures it or its builder
      rebuild: context.reread ? rebuildFrom(builderOf, context.reread) : builder.build.bind(builder),
    };
  }

  /** The upstream call (and its one retry), then the turn as it streams. */
  private async call(prepared: PreparedTurn): Promise<TurnRun> {
    const { plugin, policy, key, match, sessionId, turnId, clientModel, prompt, reasoningEnabled, rejected } = prepared;
    const keyHash = this.keyHash;
    let effective = prepared.effective;
    // running from its upstream call on: a turn that completes while another waits for its upstream is not alone
    this.running++;
    let ended = false;
    const end = () => {
      if (!ended) this.running--;
      ended = true;
    };
    let sentAt = performance.now();
    let result: UpstreamResult;
    try {
      const sent = sendFirst(prepared);
      // while this request waits for its upstream, the turns journaled before it are committed, a batch at a time
      this.store.commitWaitingBatch();
      result = await sent;
      if (!result.ok) {
        const sent = prepared.rebuild(effective).sent;
        const named = plugin.classifyError?.(result.status, result.body, sent);
        const newlyRejected = fieldsToReject(named, sent, policy.mustEcho, rejected);
        if (newlyRejected.length > 0) {
          recordRejection({ verdicts: this.verdicts, store: this.store, bus: this.bus, log: this.log }, { ...key, sessionId, keyHash, fields: newlyRejected, status: result.status, body: result.body, clientModel });
          effective = effective.filter((field) => !newlyRejected.includes(field));
          const retry = prepared.rebuild(effective);
          this.log.debug({ session_id: sessionId, provider: key.provider, model: key.model, effective, attached: retry.attached }, "carriers attached (retry without rejected fields)");
          sentAt = performance.now();
          result = await plugin.invoke(retry.call);
        }
      }
    } catch (error) {
      end();
      throw error;
    }
    if (!result.ok) {
      end();
      this.log.warn({ provider: key.provider, model: key.model, status: result.status }, "upstream rejected the request");
      throw upstreamError(result.status, result.body, result.headers); // X-Session-Id is already set (RequestContext.onSession)
    }

    const upstreamMs = performance.now() - sentAt;
    let seq = 0;
    const publish = (type: Parameters<EventBus["publish"]>[0]["type"], fields: Record<string, unknown>) =>
      this.bus.publish({ type, session_id: sessionId, turn_id: turnId, seq: seq++, ...fields });
    publish("turn.started", { model: clientModel, provider: key.provider, upstream_model: key.model, route: routeNumber(policy), fields: effective, upstream_ms: upstreamMs });

    const accumulator = new TurnAccumulator(plugin.mergeNative);
    return {
      sessionId,
      turnId,
      model: clientModel,
      batches: relay(result.parts, { accumulator, reasoningEnabled, bus: this.bus, publish, end, pace: prepared.pace }),
      complete: async () => {
        end();
        const turn = accumulator.finish();
        // durable with every carrier verbatim: a SQLite commit shared with the turns completing alongside, or the journal when alone;
        // one literal: the origin spread into a row with the rest measured ~10 µs (V8 rebuilt it property by property)
        await this.store.saveTurnDurably({
          id: turnId,
          sessionId,
          keyHash,
          parentTurnId: match.parentTurnId,
          model: clientModel,
          plugin: prepared.pluginName,
          provider: key.provider,
          host: key.host,
          upstreamModel: key.model,
          prompt,
          content: turn.content,
          toolCalls: turn.toolCalls,
          reasoningText: turn.reasoningText,
          reasoningDetails: turn.reasoningDetails,
          nativeRecord: this.checkedNativeRecord(turn.nativeRecord, prepared.pluginName, sessionId),
          usage: turn.usage,
          finishReason: turn.finishReason,
          upstreamId: turn.upstreamId,
          fingerprint: fingerprintOf(turn.content, turn.toolCalls),
        }, this.running === 0);
        // stored in full above; only the client's view loses the reasoning it asked not to see
        if (!reasoningEnabled) turn.reasoningText = "";
        for (const toolCall of turn.toolCalls) publish("tool_call", { id: toolCall.id, name: toolCall.function.name, arguments: toolCall.function.arguments });
        publish("turn.completed", { usage: turn.usage ?? null, finish_reason: turn.finishReason });
        return turn;
      },
      fail: (error) => {
        end();
        publish("turn.failed", { error: { message: error instanceof Error ? error.message : String(error) } });
      },
    };
  }

  /** The turn's native record when it passes its plugin's schema; otherwise the turn is stored without it, and that is logged. */
  private checkedNativeRecord(record: JsonObject | undefined, plugin: string, sessionId: string): JsonObject | undefined {
    if (!record) return undefined;
    const validate = this.plugins.registry.get(plugin)?.validateNative;
    const problem = validate ? validate(record) : "the plugin declares no native record type";
    if (!problem) return record;
    this.log.error({ plugin, session_id: sessionId, problem }, "native record fails the plugin's schema; the turn is stored without it");
    return undefined;
  }

}

/** What `relay` folds a turn's answer into and publishes it on. */
interface RelayTarget {
  readonly accumulator: TurnAccumulator;
  readonly reasoningEnabled: boolean;
  readonly bus: EventBus;
  readonly publish: (type: "reasoning.delta" | "content.delta", fields: Record<string, unknown>) => void;
  /** The turn is no longer running (its answer read through, or given up). */
  readonly end: () => void;
  /** RequestContext.pace: the client's backpressure. */
  readonly pace: (() => Promise<void> | undefined) | undefined;
}

/**
 * The upstream's answer as the turn's batches: every part folded into the
 * turn, deltas published, reasoning withheld when the request disabled it.
 *
 * Declared at module level on purpose. A generator function declared inside
 * `call` is a new closure per turn, and V8 gives each such closure's
 * generators a new hidden class; hidden classes live in the old generation
 * and point back at the closure, so every turn's whole context (its
 * session match, prompt, accumulator, the parsed answer) stayed reachable
 * from dead old-space objects until the next full GC. Every young-generation
 * GC copied and then promoted it: ~4 KB a request at c=1, most of what
 * survived a scavenge (docs/performance.md).
 */
async function* relay(parts: AsyncIterable<StreamItem>, turn: RelayTarget): AsyncIterable<readonly StreamPart[]> {
  const { accumulator, reasoningEnabled, bus, publish, end, pace } = turn;
  let reasoningSeen = false;
  try {
    for await (const item of parts) {
      const batch = partsOf(item);
      let withheld = false;
      for (const part of batch) {
        accumulator.add(part);
        if (part.type === "reasoning-delta") {
          if (!reasoningEnabled) withheld = true;
          else if (bus.wants("reasoning.delta", reasoningSeen)) publish("reasoning.delta", { text: part.text });
          reasoningSeen = true;
        } else if (part.type === "text-delta" && bus.wants("content.delta")) {
          publish("content.delta", { text: part.text });
        }
      }
      yield withheld ? batch.filter((part) => part.type !== "reasoning-delta") : batch;
      // a client that is behind is waited for before more is read: the upstream is paused meanwhile (BatchQueue)
      const behind = pace?.();
      if (behind) await behind;
    }
  } finally {
    end(); // read through, failed, or abandoned by its reader
  }
}

/** The messages that asked for this turn: those after the last assistant message. */
function promptOf(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.slice(messages.findLastIndex((message) => message.role === "assistant") + 1);
}

/** A turn whose first upstream call is built: what the rest of the turn needs, and no more of the client's request. */
interface PreparedTurn {
  readonly plugin: ProviderPlugin;
  readonly pluginName: string;
  readonly policy: CarrierPolicy;
  readonly key: { provider: string; host: string; model: string };
  readonly match: SessionMatch;
  readonly sessionId: string;
  readonly turnId: string;
  readonly clientModel: string;
  readonly prompt: ChatMessage[];
  readonly reasoningEnabled: boolean;
  readonly pace: (() => Promise<void> | undefined) | undefined;
  readonly rejected: readonly CarrierField[];
  readonly effective: CarrierField[];
  /** The first call, until it is sent. */
  first: BuiltCall | undefined;
  /** The call again for these fields: for the retry, and the fields a rejected call sent. */
  rebuild(effective: readonly CarrierField[]): BuiltCall;
}

/** Sends the first call and lets go of it: the awaiting frame must not hold the body (the whole history) while the upstream answers. */
function sendFirst(turn: PreparedTurn): Promise<UpstreamResult> {
  const first = turn.first!;
  turn.first = undefined;
  return turn.plugin.invoke(first.call);
}

/** Its own scope, so the closure holds the parser of the request and not the request. */
function rebuildFrom(builderOf: (client: ChatRequest) => UpstreamRequestBuilder, reread: () => ChatRequest): (effective: readonly CarrierField[]) => BuiltCall {
  return (effective) => builderOf(reread()).build(effective);
}
