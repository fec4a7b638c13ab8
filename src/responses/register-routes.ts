import type { HttpServer } from "../api/http-server.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ResponsesApi } from "./responses-api.js";

const PREFIX = "/v1/responses/";
const INPUT_ITEMS = "/input_items";
const CANCEL = "/cancel";

/** Mounts the Responses API on the HTTP server (all routes need the API key). */
export function registerResponsesRoutes(server: HttpServer, api: ResponsesApi): void {
  server.addRoute({ method: "POST", path: "/v1/responses", auth: true, handler: (request, response) => api.create(request, response) });
  server.addRoute({ method: "POST", path: "/v1/responses/compact", auth: true, handler: (request, response) => api.compact(request, response) });
  server.addRoute({
    method: "GET",
    path: PREFIX,
    auth: true,
    handler: (_request, response, url) => (url.pathname.endsWith(INPUT_ITEMS) ? api.inputItems(responseId(url, INPUT_ITEMS), url.searchParams, response) : api.get(responseId(url), response)),
  });
  server.addRoute({ method: "POST", path: PREFIX, auth: true, handler: (_request, _response, url) => (url.pathname.endsWith(CANCEL) ? api.cancel(responseId(url, CANCEL)) : notFound(url)) });
  server.addRoute({ method: "DELETE", path: PREFIX, auth: true, handler: (_request, response, url) => api.delete(responseId(url), response) });
}

function notFound(url: URL): never {
  throw new GatewayError("not_found", `no route for POST ${url.pathname}`);
}

/** The `{id}` of `/v1/responses/{id}` (followed by `suffix`, when given). */
function responseId(url: URL, suffix = ""): string {
  let id: string;
  try {
    id = decodeURIComponent(url.pathname.slice(PREFIX.length, url.pathname.length - suffix.length));
  } catch {
    id = "";
  }
  if (!id || id.includes("/")) throw new GatewayError("not_found", `no route for ${url.pathname}`);
  return id;
}
