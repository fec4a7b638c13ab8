import { definePlugin } from "../../src/providers/plugin-api.js";
import { responsesCodec } from "./codec.js";
import schema from "./native.schema.json" with { type: "json" };
import { mergeOutput } from "./output-record.js";

/**
 * OpenAI's Responses API (also Azure OpenAI and xAI), always stateless:
 * `store: false` with each reasoning item's `encrypted_content` kept as the
 * turn's native record and replayed verbatim, before its function calls, to
 * the model that issued it and to no other (docs/plugins.md#openai-responses).
 */
export default definePlugin({
  name: "openai-responses",
  apiVersion: 1,
  wire: "openai-responses",
  description: "OpenAI Responses API, stateless (encrypted reasoning items replayed to their own model; Azure OpenAI and xAI by base_url)",
  native: { type: "openai_responses.output_items", schema },
  create(context) {
    return {
      invoke: (call) => context.http.send(responsesCodec(call), call),
      mergeNative: mergeOutput,
    };
  },
});
