import { callerOf, type Endpoint } from "../../http/endpoint-table.js";
import { responsesErrorShape } from "./errors.js";
import type { ResponsesApi } from "./responses-api.js";

/** The Responses API's rows of the endpoint table. */
export function responsesEndpoints(api: ResponsesApi): Endpoint[] {
  const row = { auth: true, scope: "chat", errorShape: responsesErrorShape } as const;
  return [
    { ...row, method: "POST", path: "/v1/responses", handler: (request, response, call) => api.create(request, response, callerOf(call)) },
    { ...row, method: "POST", path: "/v1/responses/compact", handler: (request, response, call) => api.compact(request, response, callerOf(call)) },
    { ...row, method: "GET", path: "/v1/responses/{id}", handler: (_request, response, call) => api.get(call.params.id, response, callerOf(call)) },
    { ...row, method: "DELETE", path: "/v1/responses/{id}", handler: (_request, response, call) => api.delete(call.params.id, response, callerOf(call)) },
    {
      ...row,
      method: "GET",
      path: "/v1/responses/{id}/input_items",
      handler: (_request, response, call) => api.inputItems(call.params.id, call.url.searchParams, response, callerOf(call)),
    },
    { ...row, method: "POST", path: "/v1/responses/{id}/cancel", handler: (_request, _response, call) => api.cancel(call.params.id, callerOf(call)) },
  ];
}
