import { callerOf, type Endpoint } from "../../http/endpoint-table.js";
import { anthropicErrorShape } from "./errors.js";
import type { MessagesApi } from "./messages-api.js";

/** The Anthropic Messages API's rows: its errors in Anthropic's shape from the first check on, its key also in x-api-key. */
export function messagesEndpoints(api: MessagesApi): Endpoint[] {
  const row = { auth: true, scope: "chat", errorShape: anthropicErrorShape, keyHeader: "x-api-key" } as const;
  return [
    { ...row, method: "POST", path: "/v1/messages", handler: (request, response, call) => api.create(request, response, callerOf(call)) },
    { ...row, method: "POST", path: "/v1/messages/count_tokens", handler: (request, response, call) => api.countTokens(request, response, callerOf(call)) },
  ];
}
