import type { DependencyContainer } from "tsyringe";
import { RESPONSES_API } from "../../foundation/container/tokens.js";
import { ResponsesApi } from "./responses-api.js";

/** Registers the Responses API's handlers (they keep their state in the Storage port; the gateway's endpoint table mounts them). */
export function installResponses(container: DependencyContainer): void {
  container.registerSingleton(RESPONSES_API, ResponsesApi);
}
