import {
  type HttpCodec,
  parseObject,
  readObject,
  UnreadableChunkError,
  type UpstreamCall,
  UpstreamReportedError,
  shown,
} from "../../src/providers/plugin-api.js";
import { carriedGenerateBody } from "./carried-body.js";
import { buildGenerateBody } from "./request-body.js";
import { GeminiDecoder } from "./response-decoder.js";

/**
 * The Gemini API codec: `POST {base}/v1beta/models/{model}:generateContent`,
 * or `:streamGenerateContent?alt=sse` (SSE with one whole response per
 * event), key in `x-goog-api-key`. A `base_url` that already ends in a
 * version (`…/v1beta`, `…/v1`) is used as is.
 */
export function createGeminiCodec(onSkip: (model: string, name: string) => void): HttpCodec {
  return {
    buildRequest(call: UpstreamCall) {
      const body = buildGenerateBody(call, { skipped: (name) => onSkip(call.model, name) });
      return { url: urlOf(call), headers: { ...headersOf(call, {}), ...call.provider.headers }, body: JSON.stringify(body) };
    },
    buildCarriedRequest(call, carried) {
      // the client's x-goog-* headers as it sent them (its client name), never its key to carrierd; then the route's key and headers
      return { url: urlOf(call), headers: { ...headersOf(call, carried.headers), ...call.provider.headers }, body: carriedGenerateBody(call, carried) };
    },
    decodeResponse: (body) => new GeminiDecoder().chunk(body),
    createStreamDecoder() {
      const decoder = new GeminiDecoder();
      return ({ data }) => {
        const chunk = parseObject(data);
        if (!chunk) {
          if (data.trim() === "") return [];
          throw new UnreadableChunkError(data); // not JSON, or not an object: dropping it would lose its content, so the turn ends incomplete
        }
        const error = readObject(chunk.error);
        if (error) {
          // an error event mid-stream ends the turn as a failure; a carried client gets the event as Google sent it
          throw new UpstreamReportedError(error, `Gemini stream error: ${shown(error.status ?? error.code ?? "error")}: ${shown(error.message ?? "")}`);
        }
        return decoder.chunk(chunk);
      };
    },
  };
}

/** The route's model in the path, the method the call's form names. */
function urlOf(call: UpstreamCall): string {
  const base = (call.provider.baseUrl ?? "https://generativelanguage.googleapis.com").replace(/\/+$/, "");
  const root = /\/v1(beta\d*|alpha)?$/.test(base) ? base : `${base}/v1beta`;
  const model = call.model.startsWith("models/") ? call.model.slice("models/".length) : call.model;
  // a carried streamGenerateContent without alt=sse is asked as the client asked it: Google answers one JSON array
  const verb = call.stream ? "streamGenerateContent?alt=sse" : call.carried?.verb === "streamGenerateContent" ? "streamGenerateContent" : "generateContent";
  return `${root}/models/${encodeURIComponent(model)}:${verb}`;
}

function headersOf(call: UpstreamCall, client: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: call.stream ? "text/event-stream" : "application/json" };
  for (const [name, value] of Object.entries(client)) if (name !== "x-goog-api-key") headers[name] = value;
  if (call.apiKey) headers["x-goog-api-key"] = call.apiKey;
  return headers;
}
