import "reflect-metadata";
import { inject, injectable, type DependencyContainer } from "tsyringe";
import { capabilitiesBody, modelsBody } from "../ingress/discovery.js";
import { callerOf, type Endpoint } from "../http/endpoint-table.js";
import { sendJson } from "../http/respond.js";
import { storeHealth } from "../http/store-health.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import {
  CHAT_COMPLETIONS_API,
  EVENT_FEED,
  EVENT_HUB,
  GEMINI_API,
  KEY_RING,
  MESSAGES_API,
  METRICS,
  OPTIONS,
  PLUGIN_REGISTRY,
  PROVIDER_STATS,
  RESPONSES_API,
  ROUTE_SOURCE,
  STORAGE,
} from "../foundation/container/tokens.js";
import { serveDashboard, serveDashboardAsset } from "../operations/dashboard/serve-dashboard.js";
import type { ProviderStats } from "../operations/provider-stats/provider-stats.js";
import { serveProviderStats } from "../operations/provider-stats/serve-provider-stats.js";
import type { EventFeed } from "../events/event-feed.js";
import type { EventHub } from "../events/event-hub.js";
import { answerPlainGet, EVENTS_PATH } from "../events/upgrade-guard.js";
import { mayUseModel } from "../http/keys/caller.js";
import type { KeyRing } from "../http/keys/key-ring.js";
import { SessionHistoryApi } from "../operations/history/session-history-api.js";
import type { GatewayMetrics } from "../operations/metrics/gateway-metrics.js";
import { serveMetrics } from "../operations/metrics/serve-metrics.js";
import type { ChatCompletionsApi } from "../ingress/chat-completions/chat-completions-api.js";
import { chatCompletionsEndpoints } from "../ingress/chat-completions/endpoints.js";
import type { ResponsesApi } from "../ingress/responses/responses-api.js";
import { responsesEndpoints } from "../ingress/responses/endpoints.js";
import type { MessagesApi } from "../ingress/messages/messages-api.js";
import { messagesEndpoints } from "../ingress/messages/endpoints.js";
import type { GeminiApi } from "../ingress/gemini/gemini-api.js";
import { geminiEndpoints } from "../ingress/gemini/endpoints.js";
import type { PluginRegistry } from "../providers/plugin-registry.js";
import type { RouteSource } from "../routing/routes/route-source.js";
import type { Storage } from "../storage/storage.js";

/** The gateway's endpoint table, as the composition root built it (docs/architecture.md#endpoints). */
export function gatewayEndpoints(container: DependencyContainer): Endpoint[] {
  return container.resolve(GatewayEndpoints).rows();
}

/**
 * Every endpoint of the gateway, in one table: method, path, whether the
 * server checks the key, the scope a key needs (docs/operators.md, "Access
 * keys"), and its handler. Each wire API's adapter gives its own rows, in
 * its error shape. The HTTP server serves this table and nothing else; a
 * 404 or 405 is what the table does not hold. A plain path wins over a
 * `{name}` one that also fits (`POST /v1/responses/compact` is not a
 * response id).
 */
@injectable()
export class GatewayEndpoints {
  constructor(
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(PLUGIN_REGISTRY) private readonly registry: PluginRegistry,
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CHAT_COMPLETIONS_API) private readonly chatCompletions: ChatCompletionsApi,
    @inject(RESPONSES_API) private readonly responses: ResponsesApi,
    @inject(MESSAGES_API) private readonly messages: MessagesApi,
    @inject(GEMINI_API) private readonly gemini: GeminiApi,
    @inject(EVENT_HUB) private readonly hub: EventHub,
    @inject(EVENT_FEED) private readonly events: EventFeed,
    @inject(METRICS) private readonly metrics: GatewayMetrics,
    @inject(PROVIDER_STATS) private readonly providerStats: ProviderStats,
    @inject(KEY_RING) keyRing: KeyRing,
  ) {
    this.history = new SessionHistoryApi(storage, (keyHash) => keyRing.nameOf(keyHash));
  }

  private readonly history: SessionHistoryApi;

  rows(): Endpoint[] {
    const { options, routes, registry, events, hub, metrics, providerStats, history } = this;
    return [
      { method: "*", path: "/health", auth: false, probe: true, handler: this.alive },
      { method: "*", path: "/v1/health", auth: false, probe: true, handler: this.alive },
      // browsers ask for it on every page of the dashboard; without a key it would be a 401 in their console
      {
        method: "*",
        path: "/favicon.ico",
        auth: false,
        probe: true,
        handler: (_request, response) => void response.writeHead(204, { "cache-control": "public, max-age=86400" }).end(),
      },

      ...chatCompletionsEndpoints(this.chatCompletions),
      {
        method: "GET",
        path: "/v1/models",
        auth: true,
        scope: "chat",
        handler: (_request, response, call) =>
          sendJson(
            response,
            200,
            modelsBody(routes.current, options.env, registry, (model) => mayUseModel(callerOf(call), model)),
          ),
      },
      {
        method: "GET",
        path: "/v1/capabilities",
        auth: true,
        scope: "chat",
        handler: (_request, response) => sendJson(response, 200, capabilitiesBody(routes.current, options.store, events.describe())),
      },
      ...responsesEndpoints(this.responses),
      ...messagesEndpoints(this.messages),
      ...geminiEndpoints(this.gemini),

      // session history: a key reads and deletes its own sessions, the owner key every key's (docs/api.md#session-history)
      {
        method: "GET",
        path: "/v1/sessions",
        auth: true,
        scope: "chat",
        handler: (_request, response, call) => history.list(call.url.searchParams, response, callerOf(call)),
      },
      {
        method: "GET",
        path: "/v1/sessions/{id}",
        auth: true,
        scope: "chat",
        handler: (_request, response, call) => history.get(call.params.id, response, callerOf(call)),
      },
      {
        method: "DELETE",
        path: "/v1/sessions/{id}",
        auth: true,
        scope: "chat",
        handler: (_request, response, call) => history.delete(call.params.id, response, callerOf(call)),
      },

      // the WebSocket authenticates itself (a header, or a first message from a browser, which cannot set one) and checks the scope
      {
        method: "GET",
        path: EVENTS_PATH,
        auth: false,
        scope: "events",
        handler: answerPlainGet,
        upgrade: (request, socket, head) => hub.upgrade(request, socket, head),
      },
      // the page holds nothing: it asks for a key and sends it over the WebSocket, where the scope is checked
      { method: "GET", path: "/dashboard", auth: false, scope: "events", handler: serveDashboard },
      // its scripts, styles and uPlot, from the install itself: the page works offline
      {
        method: "GET",
        path: "/dashboard/{asset}",
        auth: false,
        scope: "events",
        handler: (_request, response, call) => serveDashboardAsset(call.params.asset, response),
      },
      { method: "GET", path: "/metrics", auth: true, scope: "admin", handler: (_request, response) => serveMetrics(metrics, response) },
      {
        method: "GET",
        path: "/v1/stats/providers",
        auth: true,
        scope: "admin",
        handler: (_request, response, call) => serveProviderStats(providerStats, call.url.searchParams, response),
      },
    ];
  }

  /**
   * A probe says nothing more than ok, except how a shared store and events
   * shared through Redis are: a shared store that does not answer makes the
   * instance unhealthy (503: a load balancer drains it until the store is
   * back); events that cannot be shared leave it serving (200,
   * events.status "degraded" and why).
   */
  private readonly alive: Endpoint["handler"] = async (_request, response) => {
    const store = await storeHealth(this.storage);
    const health = this.events.health();
    const body: Record<string, unknown> = { status: store === "unavailable" ? "unavailable" : "ok" };
    if (store !== "local") body.store = store;
    if (health.backend !== "local") body.events = health;
    sendJson(response, store === "unavailable" ? 503 : 200, body);
  };
}
