import type { DependencyContainer } from "tsyringe";
import { handleChatCompletions } from "../ingress/chat-completions/chat-completions.js";
import { capabilitiesBody, modelsBody } from "../ingress/discovery.js";
import type { Endpoint, EndpointCall } from "../http/endpoint-table.js";
import { sendJson } from "../http/respond.js";
import { storeHealth } from "../http/store-health.js";
import type { ChatService } from "../turn/chat-service.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import {
  CHAT_SERVICE,
  EVENT_FEED,
  EVENT_HUB,
  HOSTED_TOOL_GATE,
  KEY_RING,
  MESSAGES_API,
  METRICS,
  OPTIONS,
  PROVIDER_STATS,
  RESPONSES_API,
  ROUTE_SOURCE,
  STORAGE,
} from "../foundation/container/tokens.js";
import type { HostedToolGate } from "../ingress/hosted-tools.js";
import { serveDashboard, serveDashboardAsset } from "../operations/dashboard/serve-dashboard.js";
import type { ProviderStats } from "../operations/provider-stats/provider-stats.js";
import { serveProviderStats } from "../operations/provider-stats/serve-provider-stats.js";
import type { EventFeed } from "../events/event-feed.js";
import type { EventHub } from "../events/event-hub.js";
import { answerPlainGet, EVENTS_PATH } from "../events/upgrade-guard.js";
import { mayUseModel, type Caller } from "../http/keys/caller.js";
import type { KeyRing } from "../http/keys/key-ring.js";
import { SessionHistoryApi } from "../operations/history/session-history-api.js";
import type { GatewayMetrics } from "../operations/metrics/gateway-metrics.js";
import { serveMetrics } from "../operations/metrics/serve-metrics.js";
import type { ResponsesApi } from "../ingress/responses/responses-api.js";
import { anthropicErrorShape } from "../ingress/messages/errors.js";
import type { MessagesApi } from "../ingress/messages/messages-api.js";
import type { RouteSource } from "../routing/routes/route-source.js";
import type { Storage } from "../storage/storage.js";

/**
 * Every endpoint of the gateway, in one table: method, path, whether the
 * server checks the key, the scope a key needs (docs/operators.md, "Access
 * keys"), and its handler. The HTTP server serves this table and nothing
 * else; a 404 or 405 is what the table does not hold. A plain path wins
 * over a `{name}` one that also fits (`POST /v1/responses/compact` is not a
 * response id).
 */
export function gatewayEndpoints(container: DependencyContainer): Endpoint[] {
  const options = container.resolve<GatewayOptions>(OPTIONS);
  const routes = container.resolve<RouteSource>(ROUTE_SOURCE);
  const chat = container.resolve<ChatService>(CHAT_SERVICE);
  const responses = container.resolve<ResponsesApi>(RESPONSES_API);
  const gate = container.resolve<HostedToolGate>(HOSTED_TOOL_GATE);
  const messages = container.resolve<MessagesApi>(MESSAGES_API);
  const hub = container.resolve<EventHub>(EVENT_HUB);
  const metrics = container.resolve<GatewayMetrics>(METRICS);
  const providerStats = container.resolve<ProviderStats>(PROVIDER_STATS);
  const events = container.resolve<EventFeed>(EVENT_FEED);
  const storage = container.resolve<Storage>(STORAGE);
  const keyRing = container.resolve<KeyRing>(KEY_RING);
  const history = new SessionHistoryApi(storage, (keyHash) => keyRing.nameOf(keyHash));
  // a probe says nothing more than ok, except how a shared store and events shared through Redis are: a shared store
  // that does not answer makes the instance unhealthy (503: a load balancer drains it until the store is back); events
  // that cannot be shared leave it serving (200, events.status "degraded" and why)
  const alive: Endpoint["handler"] = async (_request, response) => {
    const store = await storeHealth(storage);
    const health = events.health();
    const body: Record<string, unknown> = { status: store === "unavailable" ? "unavailable" : "ok" };
    if (store !== "local") body.store = store;
    if (health.backend !== "local") body.events = health;
    sendJson(response, store === "unavailable" ? 503 : 200, body);
  };
  return [
    { method: "*", path: "/health", auth: false, probe: true, handler: alive },
    { method: "*", path: "/v1/health", auth: false, probe: true, handler: alive },
    // browsers ask for it on every page of the dashboard; without a key it would be a 401 in their console
    {
      method: "*",
      path: "/favicon.ico",
      auth: false,
      probe: true,
      handler: (_request, response) => void response.writeHead(204, { "cache-control": "public, max-age=86400" }).end(),
    },

    {
      method: "POST",
      path: "/v1/chat/completions",
      auth: true,
      scope: "chat",
      handler: (request, response, call) => handleChatCompletions(request, response, { chat, options, routes, gate }, callerOf(call)),
    },
    {
      method: "GET",
      path: "/v1/models",
      auth: true,
      scope: "chat",
      handler: (_request, response, call) =>
        sendJson(
          response,
          200,
          modelsBody(routes.current, options.env, chat.plugins.registry, (model) => mayUseModel(callerOf(call), model)),
        ),
    },
    {
      method: "GET",
      path: "/v1/capabilities",
      auth: true,
      scope: "chat",
      handler: (_request, response) => sendJson(response, 200, capabilitiesBody(routes.current, options.store, events.describe())),
    },

    {
      method: "POST",
      path: "/v1/responses",
      auth: true,
      scope: "chat",
      handler: (request, response, call) => responses.create(request, response, callerOf(call)),
    },
    {
      method: "POST",
      path: "/v1/responses/compact",
      auth: true,
      scope: "chat",
      handler: (request, response, call) => responses.compact(request, response, callerOf(call)),
    },
    {
      method: "GET",
      path: "/v1/responses/{id}",
      auth: true,
      scope: "chat",
      handler: (_request, response, call) => responses.get(call.params.id, response, callerOf(call)),
    },
    {
      method: "DELETE",
      path: "/v1/responses/{id}",
      auth: true,
      scope: "chat",
      handler: (_request, response, call) => responses.delete(call.params.id, response, callerOf(call)),
    },
    {
      method: "GET",
      path: "/v1/responses/{id}/input_items",
      auth: true,
      scope: "chat",
      handler: (_request, response, call) => responses.inputItems(call.params.id, call.url.searchParams, response, callerOf(call)),
    },
    {
      method: "POST",
      path: "/v1/responses/{id}/cancel",
      auth: true,
      scope: "chat",
      handler: (_request, _response, call) => responses.cancel(call.params.id, callerOf(call)),
    },

    // the Anthropic Messages API: its errors in Anthropic's shape from the first check on, its key also in x-api-key
    {
      method: "POST",
      path: "/v1/messages",
      auth: true,
      scope: "chat",
      errorShape: anthropicErrorShape,
      keyHeader: "x-api-key",
      handler: (request, response, call) => messages.create(request, response, callerOf(call)),
    },
    {
      method: "POST",
      path: "/v1/messages/count_tokens",
      auth: true,
      scope: "chat",
      errorShape: anthropicErrorShape,
      keyHeader: "x-api-key",
      handler: (request, response, call) => messages.countTokens(request, response, callerOf(call)),
    },

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

/** The caller of a row the server authenticated (`auth: true`): always set there. */
function callerOf(call: EndpointCall): Caller {
  if (!call.caller) throw new Error("an authenticated endpoint was called without a caller");
  return call.caller;
}
