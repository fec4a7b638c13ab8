import type { HttpCodec, UpstreamCall } from "../../src/providers/plugin-api.js";
import { carriedMessagesBody } from "./carried-body.js";
import { buildMessagesBody } from "./request-body.js";
import { AnthropicDecoder } from "./response-decoder.js";

/** The Messages API version header every request carries. */
const ANTHROPIC_VERSION = "2023-06-01";
/** Vertex AI names the API version in the body instead. */
const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/**
 * The Anthropic Messages API codec. One plugin serves three front doors:
 * - Anthropic: `base_url: https://api.anthropic.com` → `POST {base}/v1/messages`, `x-api-key`;
 * - Microsoft Foundry: `base_url: https://RESOURCE.services.ai.azure.com/anthropic`, same path and key header;
 * - Google Vertex AI: a base URL on `*-aiplatform.googleapis.com` ending in
 *   `/projects/P/locations/L`; the model goes into the path
 *   (`…/publishers/anthropic/models/M:rawPredict` / `:streamRawPredict`),
 *   `anthropic_version` into the body, and the key (an OAuth access token)
 *   into `Authorization: Bearer`.
 * Headers from routes.yaml (`anthropic-beta`, another auth header) go on top,
 * and a Messages API client's own `anthropic-beta` features with them.
 */
export function createAnthropicCodec(note: (message: string) => void): HttpCodec {
  return {
    buildRequest(call: UpstreamCall) {
      const body = buildMessagesBody(call, note);
      const headers: Record<string, string> = { "content-type": "application/json", accept: call.stream ? "text/event-stream" : "application/json" };
      const base = (call.provider.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "");
      let url: string;
      if (isVertex(call.provider.host)) {
        delete body.model;
        body.anthropic_version = VERTEX_ANTHROPIC_VERSION;
        url = `${base}/publishers/anthropic/models/${encodeURIComponent(call.model)}:${call.stream ? "streamRawPredict" : "rawPredict"}`;
        if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
      } else {
        url = `${base}/v1/messages`;
        headers["anthropic-version"] = ANTHROPIC_VERSION;
        if (call.apiKey) headers["x-api-key"] = call.apiKey;
      }
      return { url, headers: withClientBetas({ ...headers, ...call.provider.headers }, call.body.anthropic_beta), body: JSON.stringify(body) };
    },
    buildCarriedRequest(call, carried) {
      const vertex = isVertex(call.provider.host);
      const base = (call.provider.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "");
      // the client's anthropic-* headers as it sent them (its API version, its betas), then carrierd's credentials, then routes.yaml's
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: call.stream ? "text/event-stream" : "application/json",
        ...(vertex ? {} : { "anthropic-version": ANTHROPIC_VERSION }),
      };
      for (const [name, value] of Object.entries(carried.headers))
        if (name !== "anthropic-beta" && !(vertex && name === "anthropic-version")) headers[name] = value;
      let url: string;
      if (vertex) {
        url = `${base}/publishers/anthropic/models/${encodeURIComponent(call.model)}:${call.stream ? "streamRawPredict" : "rawPredict"}`;
        if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
      } else {
        url = `${base}/v1/messages`;
        if (call.apiKey) headers["x-api-key"] = call.apiKey;
      }
      return {
        url,
        headers: withClientBetas({ ...headers, ...call.provider.headers }, carried.headers["anthropic-beta"]),
        body: carriedMessagesBody(call, carried, vertex),
      };
    },
    decodeResponse: (body) => new AnthropicDecoder().response(body),
    createStreamDecoder() {
      const decoder = new AnthropicDecoder();
      return ({ data }) => decoder.event(data);
    },
  };
}

/**
 * The `anthropic-beta` features a Messages API client asked for (carrierd's
 * `/v1/messages` puts its header under `anthropic_beta`, never sent in the
 * body), joined to those routes.yaml names, each once.
 */
function withClientBetas(headers: Record<string, string>, clientBetas: unknown): Record<string, string> {
  if (typeof clientBetas !== "string" || clientBetas.trim() === "") return headers;
  const name = Object.keys(headers).find((key) => key.toLowerCase() === "anthropic-beta") ?? "anthropic-beta";
  if (!headers[name]) return { ...headers, [name]: clientBetas }; // the client's list as it sent it
  const betas = [...(headers[name] ?? "").split(","), ...clientBetas.split(",")].map((beta) => beta.trim()).filter(Boolean);
  return { ...headers, [name]: [...new Set(betas)].join(",") };
}

function isVertex(host: string): boolean {
  return host === "aiplatform.googleapis.com" || host.endsWith("-aiplatform.googleapis.com");
}
