import type { RequestDialect } from "../../providers/contract.js";
import type { DialectRoute } from "./request-dialect.js";

/**
 * The dialects carrierd ships, consulted after the file's own `dialects`
 * (docs/routes.md#dialects lists them with their numbers): an operator
 * whose provider changes a spelling writes one entry above them instead of
 * waiting for a release. Sources: each provider's API reference for its
 * reasoning parameter.
 */
export const SHIPPED_DIALECTS: readonly Readonly<DialectRoute>[] = [
  // https://openrouter.ai/docs/guides/best-practices/reasoning-tokens: one `reasoning` object for every model it routes
  { match: { host: "openrouter.ai" }, effort: "openrouter", disable: "openrouter" },
  // DeepSeek: thinking {type: enabled|disabled} and reasoning_effort (https://api-docs.deepseek.com/guides/thinking_mode); GLM the same (https://docs.z.ai)
  { match: { host: ["api.deepseek.com", "api.z.ai", "open.bigmodel.cn"] }, effort: "reasoning_effort", disable: "thinking" },
  // Kimi K2.7 Code always thinks and errors on thinking {type: "disabled"} (https://platform.kimi.ai/docs/guide/use-kimi-k2-thinking-model): no switch to send
  { match: { host: ["moonshot.ai", "moonshot.cn", "api.kimi.com"], model: "kimi-k2.7-code*" }, effort: "drop", disable: "none" },
  // Kimi, MiMo, Hunyuan TokenHub: the thinking toggle is documented, an effort knob is not
  { match: { host: ["moonshot.ai", "moonshot.cn", "api.kimi.com", "xiaomimimo.com", "tokenhub.tencentmaas.com"] }, effort: "drop", disable: "thinking" },
  // DashScope (Qwen): top-level enable_thinking
  { match: { host: "aliyuncs.com" }, effort: "drop", disable: "enable_thinking" },
  // strict schemas that answer a key they do not know with a 4xx (Mistral 422 "Extra inputs are not permitted", Copilot "Unrecognized request argument supplied: reasoning_effort")
  { match: { host: ["mistral.ai", "sambanova.ai", "hunyuan.cloud.tencent.com", "githubcopilot.com"] }, effort: "drop", disable: "none" },
  // OpenAI's reasoning models refuse max_tokens ("Use 'max_completion_tokens' instead") and read developer messages as such
  { match: { host: "api.openai.com" }, developer_role: "developer", token_limit: "max_completion_tokens" },
];

/**
 * What no entry sets: OpenAI's effort spelling with no off switch to rely on
 * (Groq, Cerebras, vLLM, Ollama, llama.cpp, LM Studio), `developer` sent as
 * `system` and the limit as `max_tokens`, which DeepSeek, Kimi, GLM,
 * OpenRouter, Mistral and local servers all read.
 */
export const FALLBACK_DIALECT: RequestDialect = Object.freeze({
  effort: "reasoning_effort",
  disable: "none",
  developerRole: "system",
  tokenLimit: "max_tokens",
});
