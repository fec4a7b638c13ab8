import type { DependencyContainer } from "tsyringe";
import { EndpointTable } from "../http/endpoint-table.js";
import { HttpServer } from "../http/http-server.js";
import type { EventBus } from "../foundation/event-bus/event-bus.js";
import { buildContainer } from "./build-container.js";
import { gatewayEndpoints } from "./endpoints.js";
import {
  EVENT_BUS,
  EVENT_FEED,
  EVENT_HUB,
  KEY_RING,
  LOGGER,
  METRICS,
  PLUGIN_REGISTRY,
  PROVIDER_STATS,
  ROUTE_SOURCE,
  STORAGE,
  UPSTREAM_HTTP,
} from "../foundation/container/tokens.js";
import { openAIErrorShape } from "../ingress/chat-completions/errors.js";
import type { ProviderStats } from "../operations/provider-stats/provider-stats.js";
import type { KeyRing } from "../http/keys/key-ring.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import type { Logger } from "../foundation/logging/logger.js";
import type { RouteSource } from "../routing/routes/route-source.js";
import type { UpstreamHttp } from "../providers/upstream/upstream-http.js";
import type { Storage } from "../storage/storage.js";
import type { EventHub } from "../events/event-hub.js";
import type { GatewayMetrics } from "../operations/metrics/gateway-metrics.js";
import type { EventFeed } from "../events/event-feed.js";
import { registerSecret } from "../foundation/logging/redact.js";
import type { EnvFiles } from "../foundation/config/env-files.js";
import { unsetKeyWarnings } from "../ingress/provider-keys.js";
import type { PluginRegistry } from "../providers/plugin-registry.js";
import type { ProviderConfig } from "../providers/contract.js";
import type { RouteTable } from "../routing/routes/route-table.js";
import { startTracing } from "../foundation/tracing/start-tracing.js";

/** A running gateway. */
export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly container: DependencyContainer;
  /** Re-reads routes.yaml now (what SIGHUP does). */
  reloadRoutes(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the container, starts watching routes.yaml (and the .env files,
 * when given: their variables are `options.env`'s), and listens.
 */
export async function startGateway(options: GatewayOptions, log: Logger, envFiles?: EnvFiles): Promise<Gateway> {
  const container = await buildContainer(options, log);
  const routes = container.resolve<RouteSource>(ROUTE_SOURCE);
  const plugins = container.resolve<PluginRegistry>(PLUGIN_REGISTRY);
  // the values themselves are masked in every log line and upstream error message, whatever their shape
  const registerKeys = (table: RouteTable) => {
    for (const provider of table.providers.values()) if (provider.apiKeyEnv) registerSecret(options.env[provider.apiKeyEnv]);
  };
  const envChanged = (names: string[]) => {
    log.info({ variables: names, files: envFiles?.paths }, `.env: ${names.join(", ")} set, changed or removed; in force now`);
    registerKeys(routes.current);
  };
  registerSecret(options.apiKey);
  registerKeys(routes.current);
  routes.onReload((next, previous) => {
    // a provider added with its key in .env works at once, whichever of the two files was saved first
    const names = envFiles?.load() ?? [];
    if (names.length > 0) envChanged(names);
    registerKeys(next);
    // a provider the edit added or changed whose key is not set says so now, not at its first request
    const touched = [...next.providers.values()].filter((provider) => !sameProvider(previous.providers.get(provider.id), provider));
    for (const warning of unsetKeyWarnings(next, options.env, plugins, touched))
      log.warn({ provider: warning.provider, variable: warning.set }, warning.message);
  });
  await envFiles?.watch(envChanged, (error) =>
    log.warn({ err: error, files: envFiles.paths }, "a .env file could not be read; the variables stay as they were"),
  );
  const keys = container.resolve<KeyRing>(KEY_RING);
  const bus = container.resolve<EventBus>(EVENT_BUS);
  // undefined, with no OpenTelemetry package loaded, unless an OTLP endpoint is configured
  const tracing = await startTracing(options.env, bus);
  // a path no row serves (and a request Node cannot parse) is answered in OpenAI's error shape, as most clients expect
  const table = new EndpointTable(gatewayEndpoints(container), openAIErrorShape);
  const server = new HttpServer(options, table, log, bus, keys, tracing?.tracer);
  const metrics = container.resolve<GatewayMetrics>(METRICS);
  const stopCounting = server.onResponse((record) => metrics.recordRequest(record));
  const hub = container.resolve<EventHub>(EVENT_HUB);
  hub.start();
  await routes.watch();
  const address = await server.listen();
  // the CLI prints the one "carrierd listening on …" line itself, once its signal handlers are in place
  container.resolve<Logger>(LOGGER).info({ url: address.url, routes: options.routesPath, revision: routes.current.revision }, "gateway started");
  return {
    url: address.url,
    port: address.port,
    container,
    reloadRoutes: () => routes.reload("reload requested"),
    async close() {
      hub.close(); // upgraded sockets would otherwise hold server.close() open
      stopCounting();
      metrics.close();
      container.resolve<ProviderStats>(PROVIDER_STATS).close();
      await server.close();
      await tracing?.close(); // what is still buffered is exported now
      await routes.close();
      await envFiles?.close();
      await container.resolve<EventFeed>(EVENT_FEED).close();
      await container.resolve<UpstreamHttp>(UPSTREAM_HTTP).close();
      await keys.close(); // its last request counts go to the store before it closes
      await container.resolve<Storage>(STORAGE).close();
    },
  };
}

/** Whether a provider reads its key as before: the same plugin and the same variable. */
function sameProvider(before: ProviderConfig | undefined, after: ProviderConfig): boolean {
  return before !== undefined && before.plugin === after.plugin && before.apiKeyEnv === after.apiKeyEnv;
}
