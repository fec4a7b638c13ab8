import type { ChatRequest, JsonObject, ReasoningControls } from "../../src/plugins/plugin-api.js";

/** How one family of hosts spells "reason this hard" and "do not reason". */
interface HostDialect {
  readonly hosts: readonly string[];
  /** `reasoning_effort`: OpenAI's top-level string; `openrouter`: `reasoning: {effort}`; `drop`: not accepted, never sent. */
  readonly effort: "reasoning_effort" | "openrouter" | "drop";
  /** How to ask for no reasoning; `none`: the host has no switch we can rely on (reasoning is still withheld from the client). */
  readonly disable: "openrouter" | "thinking" | "enable_thinking" | "none";
}

/** First match wins; hosts match subdomains too. Sources: each provider's API reference for its reasoning parameter. */
const DIALECTS: readonly HostDialect[] = [
  // https://openrouter.ai/docs/guides/best-practices/reasoning-tokens — one `reasoning` object for every model it routes.
  { hosts: ["openrouter.ai"], effort: "openrouter", disable: "openrouter" },
  // DeepSeek: thinking {type: enabled|disabled} + reasoning_effort (api-docs.deepseek.com/guides/thinking_mode); GLM the same (docs.z.ai thinking-mode).
  { hosts: ["api.deepseek.com", "api.z.ai", "open.bigmodel.cn"], effort: "reasoning_effort", disable: "thinking" },
  // Kimi, MiMo, Hunyuan TokenHub: the thinking toggle is documented, an effort knob is not.
  { hosts: ["moonshot.ai", "moonshot.cn", "api.kimi.com", "xiaomimimo.com", "tokenhub.tencentmaas.com"], effort: "drop", disable: "thinking" },
  // DashScope (Qwen): top-level enable_thinking.
  { hosts: ["aliyuncs.com"], effort: "drop", disable: "enable_thinking" },
  // Strict schemas that answer any key they do not know with a 4xx (Mistral 422 "Extra inputs are not permitted", Copilot "Unrecognized request argument supplied: reasoning_effort").
  { hosts: ["mistral.ai", "sambanova.ai", "hunyuan.cloud.tencent.com", "githubcopilot.com"], effort: "drop", disable: "none" },
];

/** OpenAI itself, Groq, Cerebras, vLLM, Ollama, llama.cpp, LM Studio: the OpenAI spelling, no dependable off switch. */
const OPENAI_STYLE: HostDialect = { hosts: [], effort: "reasoning_effort", disable: "none" };

/**
 * Expresses the request's reasoning controls (SPEC §7) in the upstream's own
 * fields. carrierd owns `reasoning_effort`: a client-sent value arrives here
 * as `controls.effort` and is re-spelled per host, so a host that rejects the
 * field never receives it. Returns `body` itself when nothing changes.
 */
export function applyReasoningControls(body: ChatRequest, controls: ReasoningControls, host: string): ChatRequest {
  const disabled = !controls.enabled || controls.effort === "none";
  const effort = controls.effort && controls.effort !== "none" ? controls.effort : undefined;
  if (!disabled && !effort && !("reasoning_effort" in body)) return body;
  const dialect = DIALECTS.find((candidate) => candidate.hosts.some((pattern) => hostMatches(host, pattern))) ?? OPENAI_STYLE;
  const { reasoning_effort: _owned, ...rest } = body;
  const out: ChatRequest = rest as ChatRequest;

  if (disabled) {
    switch (dialect.disable) {
      case "openrouter":
        out.reasoning = { ...objectOr(body.reasoning), enabled: false };
        delete (out.reasoning as JsonObject).effort;
        return out;
      case "thinking":
        out.thinking = { type: "disabled" };
        return out;
      case "enable_thinking":
        out.enable_thinking = false;
        return out;
      case "none":
        // No off switch: an explicit "none" effort is still the client's word where the spelling is OpenAI's.
        if (controls.effort === "none" && dialect.effort === "reasoning_effort") out.reasoning_effort = "none";
        return out;
    }
  }
  if (effort) {
    if (dialect.effort === "reasoning_effort") out.reasoning_effort = effort;
    else if (dialect.effort === "openrouter") out.reasoning = { ...objectOr(body.reasoning), effort };
  }
  return out;
}

function objectOr(value: unknown): JsonObject {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : {};
}

function hostMatches(host: string, pattern: string): boolean {
  return host === pattern || host.endsWith(`.${pattern}`);
}
