import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { HTTP_SERVER, RESPONSES_API } from "../container/tokens.js";
import { registerResponsesRoutes } from "./register-routes.js";
import { ResponsesApi } from "./responses-api.js";

/** Registers the Responses API's handlers (they keep their state in the Storage port), and mounts its routes when the HTTP server is first resolved. */
export function installResponses(container: DependencyContainer): void {
  container.registerSingleton(RESPONSES_API, ResponsesApi);
  container.afterResolution<HttpServer>(HTTP_SERVER, (_token, server) => registerResponsesRoutes(server as HttpServer, container.resolve<ResponsesApi>(RESPONSES_API)), { frequency: "Once" });
}
