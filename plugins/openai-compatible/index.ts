import { definePlugin } from "../../src/providers/plugin-api.js";
import { SKIP_SIGNATURE } from "../gemini/parts-layout.js";
import { createOpenAICompatibleCodec } from "./codec.js";
import { classifyOpenAIError } from "./errors.js";
import schema from "./native.schema.json" with { type: "json" };
import { mergeExtra } from "./tool-call-extra.js";

/**
 * Any OpenAI-style chat-completions upstream: DeepSeek, Kimi, MiMo, GLM,
 * OpenRouter, Mistral, Groq, vLLM, Ollama, llama.cpp, Gemini's
 * OpenAI-compatible endpoint… Its native record is the `extra_content` of
 * each tool call (the carrier field of that name).
 */
export default definePlugin({
  name: "openai-compatible",
  apiVersion: 1,
  description: "OpenAI-style chat completions (reasoning_content / reasoning / reasoning_details, tool calls' extra_content)",
  // a chat completions client on this plugin's routes is carried as it sent its request (docs/architecture.md#two-paths)
  wire: "openai-chat",
  native: { type: "openai_compatible.tool_call_extra", schema, field: "extra_content" },
  create(context) {
    const codec = createOpenAICompatibleCodec((model, name) =>
      context.log.debug(
        { model, function: name, signature: SKIP_SIGNATURE },
        "function call has no thought signature (history from another model or from before carrierd); sent the documented skip value",
      ),
    );
    return {
      invoke: (call) => context.http.send(codec, call),
      classifyError: classifyOpenAIError,
      mergeNative: mergeExtra,
    };
  },
});
