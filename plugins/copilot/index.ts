import { definePlugin } from "../../src/providers/plugin-api.js";
import { classifyOpenAIError } from "../openai-compatible/errors.js";
import { copilotCodec, mergeCopilotRecord } from "./codec.js";
import schema from "./native.schema.json" with { type: "json" };

/**
 * GitHub Copilot chat (OpenAI-style): `reasoning_text` streams as reasoning,
 * `reasoning_opaque` is stored and returned only to Copilot. Auth: the
 * Copilot API token in `api_key_env` (sent as a bearer token); Copilot's
 * integration headers (`Copilot-Integration-Id`, `Editor-Version`) go under
 * the provider's `headers` in routes.yaml.
 */
export default definePlugin({
  name: "copilot",
  apiVersion: 1,
  description: "GitHub Copilot chat API (reasoning_text + reasoning_opaque)",
  native: { type: "copilot.native_assistant", schema },
  create(context) {
    return {
      invoke: (call) => context.http.send(copilotCodec, call),
      classifyError: classifyOpenAIError,
      mergeNative: mergeCopilotRecord,
    };
  },
});
