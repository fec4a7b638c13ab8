import { inject, injectable } from "tsyringe";
import { EVENT_BUS, LOGGER, OPTIONS, PLUGIN_HOST, ROUTE_SOURCE } from "../container/tokens.js";
import { shapeMessages } from "../carriers/shape-messages.js";
import { TurnAccumulator, type AssistantTurn } from "../carriers/turn-accumulator.js";
import type { GatewayOptions } from "../config/options.js";
import { GatewayError, upstreamError } from "../errors/gateway-error.js";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { ChatRequest, StreamPart, UpstreamCall } from "../plugins/contract.js";
import type { PluginHost } from "../plugins/plugin-host.js";
import type { RouteSource } from "../routes/route-source.js";
import { buildUpstreamBody } from "./upstream-body.js";
import { checkSessionId, newId } from "./session-id.js";

/** Who is asking, and how. */
export interface RequestContext {
  /** The client's X-Session-Id, when it sent one. */
  readonly sessionHeader: string | undefined;
  readonly stream: boolean;
  readonly signal: AbortSignal;
}

/**
 * One assistant turn in flight. Its `parts` are the upstream's answer in
 * canonical form (reasoning already withheld when the request disabled it);
 * every part is folded into the turn and published once on the event bus.
 * `complete()` makes the turn durable; call it before telling the client
 * the turn is done.
 */
export interface TurnRun {
  readonly sessionId: string;
  readonly turnId: string;
  /** The model name the client asked for. */
  readonly model: string;
  readonly parts: AsyncIterable<StreamPart>;
  complete(): Promise<AssistantTurn>;
  fail(error: unknown): void;
}

/** The request path shared by chat completions and the Responses API. */
@injectable()
export class ChatService {
  constructor(
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(PLUGIN_HOST) private readonly plugins: PluginHost,
    @inject(EVENT_BUS) private readonly bus: EventBus,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OPTIONS) private readonly options: GatewayOptions,
  ) {}

  /** Resolves, replays, and calls the upstream. Throws a GatewayError (404, upstream 4xx…) before anything reached the client. */
  async start(request: ChatRequest, context: RequestContext): Promise<TurnRun> {
    const table = this.routes.current; // this request keeps this table to its end
    const resolved = table.resolveModel(request.model);
    if (!resolved) throw new GatewayError("model_not_found", `The model '${request.model}' does not exist in routes.yaml`, "model");
    const plugin = this.plugins.instance(resolved.provider.plugin);
    if (!plugin) throw new GatewayError("provider_not_configured", `plugin "${resolved.provider.plugin}" is not loaded`);
    const policy = table.policyFor(resolved.provider, resolved.upstreamModel);
    const sessionId = context.sessionHeader ? checkSessionId(context.sessionHeader) : newId("sess_");
    const turnId = newId("turn_");
    const reasoningEnabled = request.model_options?.reasoning?.enabled !== false;

    const messages = shapeMessages(request.messages, policy);
    this.log.debug({ session_id: sessionId, route: policy.routeIndex, fields: policy.fields }, "carriers shaped");
    const body = buildUpstreamBody(request, messages, resolved, policy, context.stream);
    const apiKey = resolved.provider.apiKeyEnv ? this.options.env[resolved.provider.apiKeyEnv] : undefined;
    const reasoning = { enabled: reasoningEnabled, effort: request.model_options?.reasoning?.effort ?? request.reasoning_effort ?? undefined };
    const call: UpstreamCall = { provider: resolved.provider, apiKey, model: resolved.upstreamModel, body, stream: context.stream, reasoning, policy, signal: context.signal };

    const result = await plugin.invoke(call);
    if (!result.ok) {
      this.log.warn({ provider: resolved.provider.id, model: resolved.upstreamModel, status: result.status }, "upstream rejected the request");
      throw upstreamError(result.status, result.body);
    }

    let seq = 0;
    const publish = (type: Parameters<EventBus["publish"]>[0]["type"], fields: Record<string, unknown>) =>
      this.bus.publish({ type, session_id: sessionId, turn_id: turnId, seq: seq++, ...fields });
    publish("turn.started", { model: request.model, provider: resolved.provider.id, upstream_model: resolved.upstreamModel, route: policy.routeIndex, fields: policy.fields });

    const accumulator = new TurnAccumulator(plugin.mergeNative);
    const bus = this.bus;
    async function* relay(): AsyncIterable<StreamPart> {
      for await (const part of result.ok ? result.parts : []) {
        accumulator.add(part);
        if (part.type === "reasoning-delta") {
          if (!reasoningEnabled) continue;
          if (bus.listenerCount > 0) publish("reasoning.delta", { text: part.text });
        } else if (part.type === "text-delta" && bus.listenerCount > 0) {
          publish("content.delta", { text: part.text });
        }
        yield part;
      }
    }

    return {
      sessionId,
      turnId,
      model: request.model,
      parts: relay(),
      complete: async () => {
        const turn = accumulator.finish();
        if (!reasoningEnabled) turn.reasoningText = "";
        for (const call of turn.toolCalls) publish("tool_call", { id: call.id, name: call.function.name, arguments: call.function.arguments });
        publish("turn.completed", { usage: turn.usage ?? null, finish_reason: turn.finishReason });
        return turn;
      },
      fail: (error) => {
        publish("turn.failed", { error: { message: error instanceof Error ? error.message : String(error) } });
      },
    };
  }
}
