import "reflect-metadata";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { ChatService } from "../turn/chat-service.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import { EventBus } from "../foundation/event-bus/event-bus.js";
import { EventHub } from "../events/event-hub.js";
import { localFeed } from "../events/event-feed.js";
import { openRedisFeed } from "../events/redis/redis-event-feed.js";
import { GatewayMetrics } from "../operations/metrics/gateway-metrics.js";
import { ProviderStats } from "../operations/provider-stats/provider-stats.js";
import { ENVELOPES, EVENT_FEED, EVENT_HUB, KEY_RING, METRICS, PROVIDER_STATS } from "../foundation/container/tokens.js";
import { Envelopes } from "../routing/carriers/envelope.js";
import { EnvelopeKeyRing } from "../routing/carriers/envelope-keys.js";
import { KeyRing } from "../http/keys/key-ring.js";
import type { Logger } from "../foundation/logging/logger.js";
import { PluginHost } from "../providers/plugin-host.js";
import { PluginRegistry } from "../providers/plugin-registry.js";
import { formatProblem, loadRoutesFile } from "../routing/routes/load-routes.js";
import { RouteSource } from "../routing/routes/route-source.js";
import { UpstreamHttp } from "../providers/upstream/upstream-http.js";
import { openStorage } from "../storage/open/open-storage.js";
import { clearVerdictsOnRouteEdit } from "../routing/verdicts/clear-on-route-edit.js";
import { ChatCompletionsApi } from "../ingress/chat-completions/chat-completions-api.js";
import { ResponsesApi } from "../ingress/responses/responses-api.js";
import { MessagesApi } from "../ingress/messages/messages-api.js";
import { GeminiApi } from "../ingress/gemini/gemini-api.js";
import { GatewayEndpoints } from "./endpoints.js";
import { installCompaction } from "../turn/compaction/install.js";
import {
  CHAT_COMPLETIONS_API,
  CHAT_SERVICE,
  MESSAGES_API,
  GEMINI_API,
  RESPONSES_API,
  EVENT_BUS,
  HOSTED_TOOL_GATE,
  LOGGER,
  OPTIONS,
  PLUGIN_HOST,
  PLUGIN_REGISTRY,
  ROUTE_SOURCE,
  STORAGE,
  UPSTREAM_HTTP,
} from "../foundation/container/tokens.js";
import { HostedToolGate } from "../ingress/hosted-tools.js";

/** A route table that cannot be used at start: the gateway refuses to start, naming every problem. */
export class RoutesInvalidError extends Error {
  constructor(readonly problems: string[]) {
    super(`routes file is invalid:\n${problems.join("\n")}`);
    this.name = "RoutesInvalidError";
  }
}

/**
 * Wires one gateway: every component is registered under its token and gets
 * what it needs through its constructor. Async set-up (plugins, the first
 * route table) happens here, before anything resolves.
 */
export async function buildContainer(options: GatewayOptions, log: Logger): Promise<DependencyContainer> {
  const container = rootContainer.createChildContainer();
  const bus = new EventBus();
  const registry = await PluginRegistry.load(options.pluginDirs, log);
  const loaded = await loadRoutesFile(options.routesPath, { knownPlugins: registry.names });
  if (!loaded.ok) throw new RoutesInvalidError(loaded.problems.map(formatProblem));
  const http = new UpstreamHttp({ streamBufferBytes: options.streamBufferBytes });
  const storage = await openStorage(options.store, {
    home: options.home,
    // the SQLite store journals a turn that completes while no request of this gateway is open upstream
    gateway: { log, walCheckpointMs: options.walCheckpointMs, walLimitBytes: options.walLimitBytes, upstreamOpen: () => http.open.count },
  });

  container.register(OPTIONS, { useValue: options });
  container.register(LOGGER, { useValue: log });
  container.register(EVENT_BUS, { useValue: bus });
  container.register(PLUGIN_REGISTRY, { useValue: registry });
  container.register(UPSTREAM_HTTP, { useValue: http });
  container.register(STORAGE, { useValue: storage });
  const keys = new KeyRing(storage.keys, options.apiKey, log);
  await keys.start();
  container.register(KEY_RING, { useValue: keys });
  container.register(ENVELOPES, { useValue: new Envelopes(new EnvelopeKeyRing(storage.envelopeKeys)) });
  const routeSource = new RouteSource(loaded.table, registry.names, bus, log);
  container.register(ROUTE_SOURCE, { useValue: routeSource });
  clearVerdictsOnRouteEdit(routeSource, storage, log);
  container.register(PLUGIN_HOST, { useValue: new PluginHost(registry, http, log) });
  container.registerSingleton(CHAT_SERVICE, ChatService);
  container.register(HOSTED_TOOL_GATE, { useValue: new HostedToolGate((plugin) => registry.get(plugin)?.definition.hostedTools ?? [], log) });
  // one class per wire API, each given what it needs through its constructor; the endpoint table is built from them
  container.registerSingleton(CHAT_COMPLETIONS_API, ChatCompletionsApi);
  container.registerSingleton(RESPONSES_API, ResponsesApi);
  container.registerSingleton(MESSAGES_API, MessagesApi);
  container.registerSingleton(GEMINI_API, GeminiApi);
  installCompaction(container);
  // what the WebSocket hub serves: this gateway's bus, or the stream every instance shares
  container.register(EVENT_FEED, { useValue: options.events?.backend === "redis" ? await openRedisFeed(options.events, bus, log) : localFeed(bus) });
  container.registerSingleton(EVENT_HUB, EventHub);
  container.registerSingleton(METRICS, GatewayMetrics);
  container.registerSingleton(PROVIDER_STATS, ProviderStats);
  container.registerSingleton(GatewayEndpoints);
  return container;
}
