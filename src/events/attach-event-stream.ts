import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { EVENT_HUB } from "../container/tokens.js";
import { dashboardRoute } from "../dashboard/dashboard-route.js";
import { sendJson } from "../api/respond.js";
import type { EventHub } from "./event-hub.js";
import { EVENTS_PATH } from "./upgrade-guard.js";

/** `GET /v1/events` (WebSocket) and `GET /dashboard`. Returns what closes every event connection. */
export function attachEventStream(container: DependencyContainer, server: HttpServer): () => void {
  const hub = container.resolve<EventHub>(EVENT_HUB);
  hub.attach(server.server);
  server.addRoute(dashboardRoute());
  // a plain GET (no Upgrade header) is a client mistake worth a precise answer
  server.addRoute({
    method: "GET",
    path: EVENTS_PATH,
    auth: false,
    handler(_request, response) {
      sendJson(response, 426, { error: { message: "GET /v1/events is a WebSocket endpoint: send Upgrade: websocket", type: "invalid_request_error", param: null, code: "upgrade_required" } }, { upgrade: "websocket" });
    },
  });
  return () => hub.close();
}
