import type { DependencyContainer } from "tsyringe";
import { MESSAGES_API } from "../../foundation/container/tokens.js";
import { MessagesApi } from "./messages-api.js";

/** Registers the Anthropic Messages API's handlers (the gateway's endpoint table mounts them). */
export function installMessages(container: DependencyContainer): void {
  container.registerSingleton(MESSAGES_API, MessagesApi);
}
