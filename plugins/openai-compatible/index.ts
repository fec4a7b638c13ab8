import { definePlugin } from "../../src/plugins/plugin-api.js";
import { openAICompatibleCodec } from "./codec.js";
import { classifyOpenAIError } from "./errors.js";

/** Any OpenAI-style chat-completions upstream: DeepSeek, Kimi, MiMo, GLM, OpenRouter, Mistral, Groq, vLLM, Ollama, llama.cpp… */
export default definePlugin({
  name: "openai-compatible",
  apiVersion: 1,
  description: "OpenAI-style chat completions (reasoning_content / reasoning / reasoning_details)",
  create(context) {
    return {
      invoke: (call) => context.http.send(openAICompatibleCodec, call),
      classifyError: classifyOpenAIError,
    };
  },
});
