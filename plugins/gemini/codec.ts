import { type HttpCodec, parseObject, readObject, UnreadableChunkError, type UpstreamCall, shown } from "../../src/providers/plugin-api.js";
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
      const base = (call.provider.baseUrl ?? "https://generativelanguage.googleapis.com").replace(/\/+$/, "");
      const root = /\/v1(beta\d*|alpha)?$/.test(base) ? base : `${base}/v1beta`;
      const model = call.model.startsWith("models/") ? call.model.slice("models/".length) : call.model;
      const url = `${root}/models/${encodeURIComponent(model)}:${call.stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
      const headers: Record<string, string> = { "content-type": "application/json", accept: call.stream ? "text/event-stream" : "application/json" };
      if (call.apiKey) headers["x-goog-api-key"] = call.apiKey;
      return { url, headers: { ...headers, ...call.provider.headers }, body: JSON.stringify(body) };
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
          // an error event mid-stream ends the turn as a failure
          throw new Error(`Gemini stream error: ${shown(error.status ?? error.code ?? "error")}: ${shown(error.message ?? "")}`);
        }
        return decoder.chunk(chunk);
      };
    },
  };
}
