import type { DependencyContainer } from "tsyringe";
import { EndpointTable } from "../http/endpoint-table.js";
import { HttpServer } from "../http/http-server.js";
import type { EventBus } from "../events/bus/event-bus.js";
import { buildContainer } from "./build-container.js";
import { gatewayEndpoints } from "./endpoints.js";
import {
  EVENT_BUS,
  EVENT_FEED,
  EVENT_HUB,
  KEY_RING,
  LOGGER,
  METRICS,
  PROVIDER_STATS,
  ROUTE_SOURCE,
  STORAGE,
  UPSTREAM_HTTP,
} from "../foundation/container/tokens.js";
import { openAIErrorShape } from "../ingress/chat-completions/errors.js";
import type { ProviderStats } from "../operations/provider-stats/provider-stats.js";
import type { KeyRing } from "../http/keys/key-ring.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import type { Logger } from "../operations/logging/logger.js";
import type { RouteSource } from "../routing/routes/route-source.js";
import type { UpstreamHttp } from "../providers/upstream/upstream-http.js";
import type { Storage } from "../storage/storage.js";
import type { EventHub } from "../events/event-hub.js";
import type { GatewayMetrics } from "../operations/metrics/gateway-metrics.js";
import type { EventFeed } from "../events/event-feed.js";
import { registerSecret } from "../operations/logging/redact.js";
import type { RouteTable } from "../routing/routes/route-table.js";
import { startTracing } from "../operations/tracing/start-tracing.js";

/** A running gateway. */
export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly container: DependencyContainer;
  /** Re-reads routes.yaml now (what SIGHUP does). */
  reloadRoutes(): Promise<void>;
  close(): Promise<void>;
}

/** Builds the container, starts watching routes.yaml, and listens. */
export async function startGateway(options: GatewayOptions, log: Logger): Promise<Gateway> {
  const container = await buildContainer(options, log);
  const routes = container.resolve<RouteSource>(ROUTE_SOURCE);
  // the values themselves are masked in every log line and upstream error message, whatever their shape
  const registerKeys = (table: RouteTable) => {
    for (const provider of table.providers.values()) if (provider.apiKeyEnv) registerSecret(options.env[provider.apiKeyEnv]);
  };
  registerSecret(options.apiKey);
  registerKeys(routes.current);
  routes.onReload((next) => registerKeys(next));
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
      await container.resolve<EventFeed>(EVENT_FEED).close();
      await container.resolve<UpstreamHttp>(UPSTREAM_HTTP).close();
      await keys.close(); // its last request counts go to the store before it closes
      await container.resolve<Storage>(STORAGE).close();
    },
  };
}
