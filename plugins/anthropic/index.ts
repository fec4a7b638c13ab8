import { definePlugin } from "../../src/providers/plugin-api.js";
import { createAnthropicCodec } from "./codec.js";
import { mergeLayout } from "./content-layout.js";
import { classifyAnthropicError } from "./errors.js";
import schema from "./native.schema.json" with { type: "json" };

/**
 * Anthropic Messages API (also Vertex AI and Microsoft Foundry): signed
 * `thinking` and `redacted_thinking` blocks are stored verbatim and replayed
 * before the tool_use they preceded.
 */
export default definePlugin({
  name: "anthropic",
  apiVersion: 1,
  description: "Anthropic Messages API (signed thinking / redacted_thinking blocks; Vertex and Foundry by base_url)",
  native: { type: "anthropic.native_assistant", schema },
  // a Messages API client on this plugin's routes is carried as it sent its request (docs/architecture.md#two-paths)
  wire: "anthropic-messages",
  create(context) {
    const codec = createAnthropicCodec((message) => context.log.debug({}, message));
    return {
      invoke: (call) => context.http.send(codec, call),
      classifyError: classifyAnthropicError,
      mergeNative: mergeLayout,
    };
  },
});
