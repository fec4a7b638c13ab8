import type { HttpCodec, UpstreamCall } from "../../src/providers/plugin-api.js";
import { carriedResponsesBody } from "./carried-body.js";
import { buildResponsesBody } from "./request-body.js";
import { ResponsesDecoder } from "./response-decoder.js";

/**
 * The Responses API codec for one call (its decoder binds the record to the
 * call's model). One plugin, three front doors, told apart by `base_url`:
 * - OpenAI: `https://api.openai.com/v1` → `POST {base}/responses`, `Authorization: Bearer`;
 * - xAI: `https://api.x.ai/v1`, the same (https://docs.x.ai/docs/guides/responses-api);
 * - Azure OpenAI: a host under `openai.azure.com`, `cognitiveservices.azure.com`
 *   or `services.ai.azure.com`, key in the `api-key` header. The v1 API is
 *   `base_url: https://RESOURCE.openai.azure.com/openai/v1`; the older dated
 *   API puts its version in the base URL's query
 *   (`https://RESOURCE.openai.azure.com/openai?api-version=2025-04-01-preview`),
 *   and the path goes before it (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/responses).
 *   A provider's `auth: api-key` says so for a host that is not Azure's own
 *   (a proxy, a private endpoint), `auth: bearer` the other way round.
 * Headers from routes.yaml go on top. A Responses API client's request is
 * carried (docs/api.md#carried-requests): its own bytes, its `openai-*`
 * headers, the route's credential.
 */
export function responsesCodec(call: UpstreamCall): HttpCodec {
  return {
    buildRequest() {
      return {
        url: responsesUrl(call.provider.baseUrl ?? "https://api.openai.com/v1"),
        headers: { ...headersOf(call, {}), ...call.provider.headers },
        body: buildResponsesBody(call),
      };
    },
    buildCarriedRequest(_call, carried) {
      // the client's openai-* headers as it sent them, then the route's credential, then routes.yaml's headers
      return {
        url: responsesUrl(call.provider.baseUrl ?? "https://api.openai.com/v1"),
        headers: { ...headersOf(call, carried.headers), ...call.provider.headers },
        body: carriedResponsesBody(call, carried),
      };
    },
    decodeResponse: (body) => new ResponsesDecoder(call.model).response(body),
    createStreamDecoder() {
      const decoder = new ResponsesDecoder(call.model);
      return ({ data }) => decoder.event(data);
    },
  };
}

function headersOf(call: UpstreamCall, client: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: call.stream ? "text/event-stream" : "application/json", ...client };
  if (call.apiKey) {
    if ((call.provider.auth ?? (isAzure(call.provider.host) ? "api-key" : "bearer")) === "api-key") headers["api-key"] = call.apiKey;
    else headers.authorization = `Bearer ${call.apiKey}`;
  }
  return headers;
}

/** `{base}/responses`, with a query the base URL carries (Azure's `api-version`) kept after the path. */
export function responsesUrl(baseUrl: string): string {
  const at = baseUrl.indexOf("?");
  const path = (at < 0 ? baseUrl : baseUrl.slice(0, at)).replace(/\/+$/, "");
  return `${path}/responses${at < 0 ? "" : baseUrl.slice(at)}`;
}

const AZURE_HOSTS = [".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"];

export function isAzure(host: string): boolean {
  return AZURE_HOSTS.some((suffix) => host.endsWith(suffix));
}
