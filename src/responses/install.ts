import type { DependencyContainer } from "tsyringe";
import type { HttpServer } from "../api/http-server.js";
import { HTTP_SERVER, RESPONSE_STORE, RESPONSES_API } from "../container/tokens.js";
import type { Db } from "../store/database.js";
import { registerResponsesRoutes } from "./register-routes.js";
import { ResponsesApi } from "./responses-api.js";
import { ResponseStore } from "./response-store.js";

export { RESPONSES_MIGRATIONS } from "./migrations.js";

/** Registers the Responses API's store and handlers, and mounts its routes when the HTTP server is first resolved. */
export function installResponses(container: DependencyContainer, database: Db): void {
  container.register(RESPONSE_STORE, { useValue: new ResponseStore(database) });
  container.registerSingleton(RESPONSES_API, ResponsesApi);
  container.afterResolution<HttpServer>(HTTP_SERVER, (_token, server) => registerResponsesRoutes(server as HttpServer, container.resolve<ResponsesApi>(RESPONSES_API)), { frequency: "Once" });
}
