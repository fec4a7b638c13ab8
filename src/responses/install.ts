import type { DependencyContainer } from "tsyringe";
import { RESPONSE_STORE, RESPONSES_API } from "../container/tokens.js";
import type { Db } from "../store/database.js";
import { ResponsesApi } from "./responses-api.js";
import { ResponseStore } from "./response-store.js";

export { RESPONSES_MIGRATIONS } from "./migrations.js";

/** Registers the Responses API's store and handlers (the gateway's endpoint table mounts them). */
export function installResponses(container: DependencyContainer, database: Db): void {
  container.register(RESPONSE_STORE, { useValue: new ResponseStore(database) });
  container.registerSingleton(RESPONSES_API, ResponsesApi);
}
