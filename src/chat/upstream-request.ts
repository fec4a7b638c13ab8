import { attachStoredCarriers, type AttachedFields } from "../carriers/replay.js";
import { shapeMessages } from "../carriers/shape-messages.js";
import type { CarrierField, CarrierPolicy, ChatMessage, ChatRequest, UpstreamCall } from "../plugins/contract.js";
import type { PluginRegistry } from "../plugins/plugin-registry.js";
import type { ResolvedModel } from "../routes/route-table.js";
import type { SessionMatch } from "../sessions/session-finder.js";
import type { SessionStore } from "../store/session-store.js";
import type { ReplaySource } from "../store/stored-turn.js";
import { sentCarrierFields } from "../verdicts/unknown-field.js";
import { withCancellation, type Cancellation } from "../upstream/cancellation.js";
import { buildUpstreamBody } from "./upstream-body.js";

/**
 * One upstream attempt: the call, what it carries, and the names attached
 * per message (for the debug log). A class, not a literal with a getter
 * closure: see withCancellation for what such a getter costs.
 */
export class BuiltCall {
  private sentFields: CarrierField[] | undefined;

  constructor(
    readonly call: UpstreamCall,
    private readonly messages: readonly ChatMessage[],
    readonly attached: AttachedFields[],
  ) {}

  /** Only a rejected request needs it (the classifier): most requests never walk their messages for it. */
  get sent(): CarrierField[] {
    return (this.sentFields ??= sentCarrierFields(this.messages));
  }
}

/**
 * Builds the upstream call for a set of effective fields (SPEC §5). The
 * fallback builds a second one with fewer fields from the same request; the
 * client's history is never touched, only the wire copy differs.
 */
export class UpstreamRequestBuilder {
  private sources: Map<number, ReplaySource> | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly registry: PluginRegistry,
    private readonly request: ChatRequest,
    private readonly resolved: ResolvedModel,
    private readonly policy: CarrierPolicy,
    private readonly match: SessionMatch,
    private readonly context: { stream: boolean; cancellation: Cancellation },
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  build(effective: readonly CarrierField[]): BuiltCall {
    const { provider, upstreamModel } = this.resolved;
    const pluginHasNative = this.registry.get(provider.plugin)?.definition.native !== undefined;
    const wantsStored = effective.length > 0 || (this.policy.native && pluginHasNative);
    const replayed = attachStoredCarriers(this.request.messages, wantsStored ? this.loadSources() : new Map(), {
      plugin: provider.plugin,
      upstreamModel,
      effective,
      native: this.policy.native,
      pluginHasNative,
      family: this.resolved.family,
    });
    const messages = shapeMessages(replayed.messages, this.policy, effective);
    const body = buildUpstreamBody(this.request, messages, this.resolved, this.policy, this.context.stream);
    const reasoningOptions = this.request.model_options?.reasoning;
    // one literal, then its lazy signal (see withCancellation): no getter closure per call
    const call = withCancellation(
      {
        provider,
        apiKey: provider.apiKeyEnv ? this.env[provider.apiKeyEnv] : undefined,
        model: upstreamModel,
        body,
        stream: this.context.stream,
        reasoning: { enabled: reasoningOptions?.enabled !== false, effort: reasoningOptions?.effort ?? this.request.reasoning_effort ?? undefined },
        dialect: this.resolved.dialect,
        policy: this.policy,
      },
      this.context.cancellation,
    );
    return new BuiltCall(call, messages, replayed.attached);
  }

  /** Stored carriers of the matched turns, read once per request and only when a route can receive any. */
  private loadSources(): Map<number, ReplaySource> {
    return (this.sources ??= this.store.replaySources(this.match.turnIds));
  }
}
