import { replayOptOut } from "../routing/carriers/replay-opt-out.js";
import type { CarriedRequest, CarrierField, CarrierPolicy, ChatRequest } from "../providers/contract.js";
import type { PluginRegistry } from "../providers/plugin-registry.js";
import type { ResolvedModel } from "../routing/routes/route-table.js";
import { findSession, type SessionMatch } from "./sessions/session-finder.js";
import { storedSessionId } from "../conversation/session-scope.js";
import { lookupOnFirstAsk } from "../storage/lookup-on-first-ask.js";
import type { Storage, TurnStorage } from "../storage/storage.js";
import type { ReplaySource } from "../storage/turns.js";
import type { Cancellation } from "../providers/upstream/cancellation.js";
import { rejectedIn, type VerdictKey } from "../routing/verdicts/record-rejection.js";
import { newId } from "./sessions/session-id.js";
import { UpstreamRequestBuilder, wantsStoredCarriers, type BuiltCall } from "./upstream-request.js";
import { traceStoreRead } from "../foundation/tracing/trace-hooks.js";

/** What planning reads: the storage's turns and verdicts, the plugins' definitions, the gateway's environment. */
export interface PlanningContext {
  readonly storage: Pick<Storage, "turns">;
  readonly registry: PluginRegistry;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Where the request goes: its route's model and carriers policy. */
export interface PlannedRoute {
  readonly resolved: ResolvedModel;
  readonly policy: CarrierPolicy;
}

export interface PlanOptions {
  /** The data scope of the request's key: fingerprints match only turns filed under it, never another key's. */
  readonly keyHash: string;
  /** The stored id of the session the request names (RequestContext.explicitSession). */
  readonly explicit: string | undefined;
  /** The scope a new session's id is filed under. */
  readonly sessionScope: string | undefined;
  /** RequestContext.compacted: the explicit session's turns are not placed by depth. */
  readonly compacted?: boolean;
  readonly stream: boolean;
  readonly cancellation: Cancellation;
  /** The same request parsed anew (RequestContext.reread): with it the plan keeps nothing of the parsed request once the first call is built. */
  readonly reread?: () => ChatRequest;
  /** Told the session as soon as it is known (RequestContext.onSession). */
  readonly onSession?: (sessionId: string) => void;
  /** RequestContext.sealed: carriers from the client's envelopes, by message index; they win over the store's. */
  readonly sealed?: ReadonlyMap<number, ReplaySource>;
  /** RequestContext.carried: every call of the turn carries the client's request. */
  readonly carried?: CarriedRequest;
}

/** A turn planned: which session it belongs to, which fields it sends, and its first upstream call. */
export interface TurnPlan {
  readonly match: SessionMatch;
  /** The matched session, or a new id when nothing matched. */
  readonly sessionId: string;
  readonly key: VerdictKey;
  /** Fields verdicts reject for this key (the table's and the session's). */
  readonly rejected: readonly CarrierField[];
  /** The route's fields minus verdicts minus the request's opt-out. */
  readonly effective: CarrierField[];
  /** What the first call attaches, for the log. */
  readonly firstAttached: BuiltCall["attached"];
  /** The first call, handed over once: the plan lets go of it (see handedOnce). */
  takeFirst(): BuiltCall;
  /** The call again for fewer fields: the one retry after a rejection. */
  rebuild(effective: readonly CarrierField[]): Promise<BuiltCall>;
}

/**
 * Route → session → verdicts → replay → the first upstream call: every
 * step before a turn goes upstream, shared by the chat service and
 * compaction's estimate, so the estimate prices exactly what will be sent.
 * It awaits the storage, then builds the first call; the request is let go
 * once this resolves (when `reread` is given, nothing in the plan holds it).
 */
export async function planTurn(context: PlanningContext, request: ChatRequest, route: PlannedRoute, options: PlanOptions): Promise<TurnPlan> {
  const { resolved, policy } = route;
  const { storage, registry, env } = context;
  const optOut = replayOptOut(request);
  const key = { provider: resolved.provider.id, host: resolved.provider.host, model: resolved.upstreamModel };
  // the request's one read before its first upstream call: key matches, verdicts, the sessions' config and the newest
  // matches' carriers together (a networked store answers it in one round trip). The carriers are asked for when any
  // field verdicts could leave would replay them: the fields that remain are a subset of these.
  const wanted = policy.fields.filter((field) => !optOut.includes(field));
  // the store read, traced as its own span when tracing is on
  const traced: Pick<TurnStorage, "lookup" | "turnsAtDepths"> = {
    lookup: (query) => traceStoreRead(options.cancellation, storage.turns.lookup(query)),
    turnsAtDepths: (keyHash, sessionId, asked) => storage.turns.turnsAtDepths(keyHash, sessionId, asked),
  };
  const reading = lookupOnFirstAsk(traced, { ...key, explicit: options.explicit, withCarriers: wantsStoredCarriers(registry, resolved, policy, wanted) });
  const match = await findSession(reading.turns, options.keyHash, request.messages, options.explicit, options.compacted !== true);
  const read = await reading.answer(options.keyHash);
  const sessionId = match.sessionId ?? storedSessionId(newId("sess_"), options.sessionScope);
  options.onSession?.(sessionId);
  const rejected = rejectedIn(key, read.verdictFields, match.sessionId === undefined ? undefined : read.modelConfigs.get(match.sessionId));
  const effective = policy.fields.filter((field) => !rejected.includes(field) && !optOut.includes(field));
  const sourcesFor = storedCarriers(context, route, match, options.sealed);
  const call = { stream: options.stream, cancellation: options.cancellation, carried: options.carried };
  const builder = new UpstreamRequestBuilder(registry, request, resolved, policy, call, env);
  const sources = wantsStoredCarriers(registry, resolved, policy, effective)
    ? withSealed(await withRead(context, match, read.sources, options.sealed), options.sealed)
    : NO_SOURCES;
  const first = builder.build(effective, sources);
  return {
    match,
    sessionId,
    key,
    rejected,
    effective,
    firstAttached: first.attached,
    takeFirst: handedOnce(first),
    // with `reread`, nothing here holds the parsed request: no closure of this scope captures it or its builder
    rebuild: options.reread ? rebuildFrom(context, route, call, options.reread, sourcesFor) : async (fields) => builder.build(fields, await sourcesFor(fields)),
  };
}

const NO_SOURCES: ReadonlyMap<number, ReplaySource> = new Map();

/**
 * The first call, given to whoever takes it and then forgotten: once it is
 * sent nothing in the plan holds its body (the whole history) while the
 * upstream answers (docs/performance.md#what-a-waiting-turn-holds). Its own
 * scope, so it holds the call and nothing else of the plan.
 */
function handedOnce(call: BuiltCall): () => BuiltCall {
  let held: BuiltCall | undefined = call;
  return () => {
    const taken = held;
    if (!taken) throw new Error("the first call was already taken");
    held = undefined;
    return taken;
  };
}

/**
 * The matched turns' carriers from the lookup's answer; the turns it did not carry (an older match chosen) read now,
 * except those of messages whose carriers came sealed.
 */
async function withRead(
  context: PlanningContext,
  match: SessionMatch,
  read: ReadonlyMap<string, ReplaySource>,
  sealed: ReadonlyMap<number, ReplaySource> | undefined,
): Promise<Map<number, ReplaySource>> {
  const sources = new Map<number, ReplaySource>();
  let missing: Map<number, string> | undefined;
  for (const [index, id] of match.turnIds) {
    if (sealed?.has(index)) continue;
    const source = read.get(id);
    if (source) sources.set(index, source);
    else (missing ??= new Map()).set(index, id);
  }
  if (missing) for (const [index, source] of await context.storage.turns.replaySources(missing)) sources.set(index, source);
  return sources;
}

/** Carriers opened from the client's envelopes, in place of the store's for their messages: no lookup decides those. */
function withSealed(sources: Map<number, ReplaySource>, sealed: ReadonlyMap<number, ReplaySource> | undefined): ReadonlyMap<number, ReplaySource> {
  if (sealed) for (const [index, source] of sealed) sources.set(index, source);
  return sources;
}

/** The matched turns' carriers for a set of fields: read only when a call with them can carry any. */
function storedCarriers(
  context: PlanningContext,
  route: PlannedRoute,
  match: SessionMatch,
  sealed: ReadonlyMap<number, ReplaySource> | undefined,
): (effective: readonly CarrierField[]) => Promise<ReadonlyMap<number, ReplaySource>> {
  return async (effective) => {
    if (!wantsStoredCarriers(context.registry, route.resolved, route.policy, effective)) return NO_SOURCES;
    const stored = await context.storage.turns.replaySources(match.turnIds);
    return sealed ? withSealed(new Map(stored), sealed) : stored;
  };
}

/** Its own scope, so the closure holds the parser of the request and not the request. */
function rebuildFrom(
  context: PlanningContext,
  route: PlannedRoute,
  call: { stream: boolean; cancellation: Cancellation; carried?: CarriedRequest },
  reread: () => ChatRequest,
  sourcesFor: (effective: readonly CarrierField[]) => Promise<ReadonlyMap<number, ReplaySource>>,
): (effective: readonly CarrierField[]) => Promise<BuiltCall> {
  return async (effective) => {
    const sources = await sourcesFor(effective);
    return new UpstreamRequestBuilder(context.registry, reread(), route.resolved, route.policy, call, context.env).build(effective, sources);
  };
}
