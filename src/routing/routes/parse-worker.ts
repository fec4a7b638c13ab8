import { parentPort } from "node:worker_threads";
import { checkRoutes } from "./load-routes.js";
import { errorMessage } from "../../foundation/util/error-message.js";

/** The worker side of RouteParser: one table checked per message, off the gateway's event loop. */
parentPort?.on("message", (message: { id: number; text: string; file: string; knownPlugins: string[] }) => {
  let reply;
  try {
    reply = { id: message.id, result: checkRoutes(message.text, message.file, { knownPlugins: new Set(message.knownPlugins) }) };
  } catch (error) {
    reply = { id: message.id, error: errorMessage(error) };
  }
  parentPort!.postMessage(reply);
});
