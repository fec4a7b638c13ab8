import { callerOf, type Endpoint, type EndpointCall } from "../../http/endpoint-table.js";
import { googleErrorShape } from "./errors.js";
import type { AnswerForm, GeminiApi } from "./gemini-api.js";

/** The API versions Google's clients call: `v1beta` (the SDKs' and Gemini CLI's default) and `v1`. */
const VERSIONS = ["/v1beta", "/v1"] as const;

/**
 * The Gemini API's rows: its errors in Google's shape from the first check
 * on, its key also in `x-goog-api-key` or `?key=`. The model is the path's
 * `{model}`, before the method's `:verb`.
 */
export function geminiEndpoints(api: GeminiApi): Endpoint[] {
  const row = { auth: true, scope: "chat", errorShape: googleErrorShape, keyHeader: "x-goog-api-key", keyQuery: "key", method: "POST" } as const;
  return VERSIONS.flatMap((version): Endpoint[] => [
    {
      ...row,
      path: `${version}/models/{model}:generateContent`,
      handler: (request, response, call) => api.generate(request, response, callerOf(call), call.params.model, "whole"),
    },
    {
      ...row,
      path: `${version}/models/{model}:streamGenerateContent`,
      handler: (request, response, call) => api.generate(request, response, callerOf(call), call.params.model, streamForm(call)),
    },
    {
      ...row,
      path: `${version}/models/{model}:countTokens`,
      handler: (request, response, call) => api.countTokens(request, response, callerOf(call), call.params.model),
    },
  ]);
}

/** `?alt=sse` streams server-sent events; without it Google answers one JSON array of the chunks. */
function streamForm(call: EndpointCall): AnswerForm {
  return call.url.searchParams.get("alt") === "sse" ? "sse" : "array";
}
