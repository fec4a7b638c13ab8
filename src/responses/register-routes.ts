import type { HttpServer } from "../api/http-server.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ResponsesApi } from "./responses-api.js";

const PREFIX = "/v1/responses/";

/** Mounts the Responses API on the HTTP server (all routes need the API key). */
export function registerResponsesRoutes(server: HttpServer, api: ResponsesApi): void {
  server.addRoute({ method: "POST", path: "/v1/responses", auth: true, handler: (request, response) => api.create(request, response) });
  server.addRoute({ method: "GET", path: PREFIX, auth: true, handler: (_request, response, url) => api.get(responseId(url), response) });
  server.addRoute({ method: "DELETE", path: PREFIX, auth: true, handler: (_request, response, url) => api.delete(responseId(url), response) });
}

function responseId(url: URL): string {
  let id: string;
  try {
    id = decodeURIComponent(url.pathname.slice(PREFIX.length));
  } catch {
    id = "";
  }
  if (!id || id.includes("/")) throw new GatewayError("not_found", `no route for ${url.pathname}`);
  return id;
}
