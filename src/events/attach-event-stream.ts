import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { EVENT_HUB } from "../container/tokens.js";
import { dashboardRoute } from "../dashboard/dashboard-route.js";
import type { EventHub } from "./event-hub.js";

/** `GET /v1/events` (WebSocket) and `GET /dashboard`. Returns what closes every event connection. */
export function attachEventStream(container: DependencyContainer, server: HttpServer): () => void {
  const hub = container.resolve<EventHub>(EVENT_HUB);
  hub.attach(server.server);
  server.addRoute(dashboardRoute());
  return () => hub.close();
}
