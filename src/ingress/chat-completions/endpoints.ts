import { callerOf, type Endpoint } from "../../http/endpoint-table.js";
import type { ChatCompletionsApi } from "./chat-completions-api.js";
import { openAIErrorShape } from "./errors.js";

/** The chat completions API's rows of the endpoint table. */
export function chatCompletionsEndpoints(api: ChatCompletionsApi): Endpoint[] {
  return [
    {
      method: "POST",
      path: "/v1/chat/completions",
      auth: true,
      scope: "chat",
      errorShape: openAIErrorShape,
      handler: (request, response, call) => api.create(request, response, callerOf(call)),
    },
  ];
}
