import { definePlugin, type JsonObject } from "../../src/providers/plugin-api.js";
import { createGeminiCodec } from "./codec.js";
import { classifyGeminiError } from "./errors.js";
import schema from "./native.schema.json" with { type: "json" };
import { SKIP_SIGNATURE } from "./parts-layout.js";

/**
 * Google Gemini API (native `generateContent`): `thoughtSignature`s are kept
 * on the parts that carried them and returned there; thought summaries
 * stream as reasoning.
 */
export default definePlugin({
  name: "gemini",
  apiVersion: 1,
  description: "Google Gemini API, native generateContent (thoughtSignature on parts, thought summaries)",
  native: { type: "gemini.native_assistant", schema },
  // a Gemini API client on this plugin's routes is carried as it sent its request (docs/architecture.md#two-paths)
  wire: "gemini",
  create(context) {
    const codec = createGeminiCodec((model, name) =>
      context.log.debug(
        { model, function: name, signature: SKIP_SIGNATURE },
        "function call has no stored thought signature (history from another model or from before carrierd); sent the documented skip value",
      ),
    );
    return {
      invoke: (call) => context.http.send(codec, call),
      classifyError: classifyGeminiError,
      // every record fragment is the whole layout so far
      mergeNative: (_collected: JsonObject | undefined, fragment: JsonObject) => fragment,
    };
  },
});
