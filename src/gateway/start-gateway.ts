import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { buildContainer } from "../container/build-container.js";
import { BACKGROUND_CHECKPOINT, DATABASE, EVENT_FEED, HTTP_SERVER, LOGGER, ROUTE_SOURCE, STORE, UPSTREAM_HTTP } from "../container/tokens.js";
import type { GatewayOptions } from "../config/options.js";
import type { Logger } from "../logging/logger.js";
import type { RouteSource } from "../routes/route-source.js";
import type { UpstreamHttp } from "../upstream/upstream-http.js";
import type { Db } from "../store/database.js";
import type { SessionStore } from "../store/session-store.js";
import type { BackgroundCheckpoint } from "../store/background-checkpoint.js";
import { attachEventStream } from "../events/attach-event-stream.js";
import type { EventFeed } from "../events/event-feed.js";
import { attachMetrics } from "../metrics/attach-metrics.js";
import { registerSecret } from "../logging/redact.js";
import type { RouteTable } from "../routes/route-table.js";

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
  const server = container.resolve<HttpServer>(HTTP_SERVER);
  const detachMetrics = attachMetrics(container, server);
  const closeEventStream = attachEventStream(container, server);
  await routes.watch();
  const address = await server.listen();
  container.resolve<Logger>(LOGGER).info({ url: address.url, routes: options.routesPath, revision: routes.current.revision }, "carrierd listening");
  return {
    url: address.url,
    port: address.port,
    container,
    reloadRoutes: () => routes.reload("reload requested"),
    async close() {
      closeEventStream(); // upgraded sockets would otherwise hold server.close() open
      detachMetrics();
      await server.close();
      await routes.close();
      await container.resolve<EventFeed>(EVENT_FEED).close();
      await container.resolve<UpstreamHttp>(UPSTREAM_HTTP).close();
      await container.resolve<BackgroundCheckpoint>(BACKGROUND_CHECKPOINT).stop();
      container.resolve<SessionStore>(STORE).close();
      container.resolve<Db>(DATABASE).close();
    },
  };
}
