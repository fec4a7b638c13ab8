import { attachStoredCarriers, type AttachedFields } from "../routing/carriers/replay.js";
import { ECHO_PLACEHOLDER, shapeMessages } from "../routing/carriers/shape-messages.js";
import type { CarriedRequest, CarrierField, CarrierPolicy, ChatMessage, ChatRequest, UpstreamCall } from "../providers/contract.js";
import type { PluginRegistry } from "../providers/plugin-registry.js";
import type { ResolvedModel } from "../routing/routes/route-table.js";
import type { ReplaySource } from "../storage/turns.js";
import { sentCarrierFields } from "../routing/verdicts/unknown-field.js";
import { withCancellation, type Cancellation } from "../providers/upstream/cancellation.js";
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

  /** The carrier fields its assistant messages carry, walked for once when asked (callWithRetry asks as it sends the call). */
  get sent(): CarrierField[] {
    return (this.sentFields ??= sentCarrierFields(this.messages));
  }

  /** What replay put on its messages, names and indexes only: kept past the call for the turn's record (TurnAudit). */
  replayShape(): SentReplay {
    const placeholders: number[] = [];
    this.messages.forEach((message, index) => {
      if (message.role === "assistant" && message.tool_calls?.length && message.reasoning_content === ECHO_PLACEHOLDER) placeholders.push(index);
    });
    return { attached: this.attached, placeholders };
  }
}

/** The carriers one upstream call's messages carried: which fields each message got, and which got the must_echo placeholder. */
export interface SentReplay {
  readonly attached: readonly AttachedFields[];
  readonly placeholders: readonly number[];
}

/** Whether a call with these fields can carry anything stored: only then are the matched turns' carriers read. */
export function wantsStoredCarriers(registry: PluginRegistry, resolved: ResolvedModel, policy: CarrierPolicy, effective: readonly CarrierField[]): boolean {
  return effective.length > 0 || (policy.native && hasNative(registry, resolved, effective));
}

/** Whether the route's plugin has a native record this call can carry: one tied to a carrier field only where that field is effective. */
function hasNative(registry: PluginRegistry, resolved: ResolvedModel, effective: readonly CarrierField[]): boolean {
  const native = registry.get(resolved.provider.plugin)?.definition.native;
  return native !== undefined && (native.field === undefined || effective.includes(native.field));
}

/**
 * Builds the upstream call for a set of effective fields (docs/sessions-and-replay.md#replay-rules) from the
 * stored carriers of the request's matched turns, read beforehand. The
 * fallback builds a second one with fewer fields from the same request; the
 * client's history is never touched, only the wire copy differs.
 */
export class UpstreamRequestBuilder {
  constructor(
    private readonly registry: PluginRegistry,
    private readonly request: ChatRequest,
    private readonly resolved: ResolvedModel,
    private readonly policy: CarrierPolicy,
    private readonly context: { stream: boolean; cancellation: Cancellation; carried?: CarriedRequest },
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  /** `sources`: the matched turns' carriers by message index (empty when wantsStoredCarriers says none can be sent). */
  build(effective: readonly CarrierField[], sources: ReadonlyMap<number, ReplaySource>): BuiltCall {
    const { provider, upstreamModel } = this.resolved;
    const pluginHasNative = hasNative(this.registry, this.resolved, effective);
    const replayed = attachStoredCarriers(this.request.messages, sources, {
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
        reasoning: {
          enabled: reasoningOptions?.enabled !== false,
          effort: reasoningOptions?.effort ?? this.request.reasoning_effort ?? undefined,
          ...(typeof reasoningOptions?.summary === "string" && reasoningOptions.summary ? { summary: reasoningOptions.summary } : {}),
        },
        dialect: this.resolved.dialect,
        // the call's fields are the effective ones: a plugin that places a carrier itself (extra_content) honours verdicts and opt-outs
        // (effective is a filter of the route's fields: the same length means the same fields)
        policy: effective.length === this.policy.fields.length ? this.policy : { ...this.policy, fields: effective },
        ...(this.context.carried ? { carried: this.carriedWithSettings(this.context.carried) } : {}),
      },
      this.context.cancellation,
    );
    return new BuiltCall(call, messages, replayed.attached);
  }

  /** The client's request with what routes.yaml sets for the route, the only settings a carried body gets (docs/routes.md). */
  private carriedWithSettings(carried: CarriedRequest): CarriedRequest {
    const defaults = this.resolved.params;
    const overrides = this.policy.requestExtra;
    return defaults || overrides ? { ...carried, settings: { defaults, overrides } } : carried;
  }
}
