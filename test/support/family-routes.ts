import type { OpenAIUpstream } from "./openai-upstream.js";

/**
 * A routes.yaml that points every provider family at the emulator. The
 * emulator listens on 127.0.0.1, so carrier routes match by provider id
 * instead of host; their fields are the shipped routes.yaml's, family by family.
 */
export function familyRoutes(upstream: OpenAIUpstream, extraCarriers = ""): string {
  const flavors = ["deepseek", "kimi", "mimo", "zai", "mistral", "groq", "cerebras", "fireworks", "openrouter", "novita", "local"];
  return `version: 1
providers:
${flavors.map((flavor) => `  ${flavor}: { plugin: openai-compatible, base_url: "${upstream.baseUrl(flavor)}" }`).join("\n")}
models:
${flavors.map((flavor) => `  - { name: "${flavor}/*", provider: ${flavor} }`).join("\n")}
carriers:
${extraCarriers}
  - match: { provider: [mistral, groq, cerebras] }
    fields: []
  - match: { provider: fireworks }
    fields: [reasoning_content]
  - match: { provider: openrouter }
    fields: [reasoning_content, reasoning, reasoning_details]
  - match: { provider: novita }
    fields: [reasoning_content, reasoning_details]
  - match: { provider: [deepseek, kimi, mimo] }
    fields: [reasoning_content]
    must_echo: true
  - match: { provider: zai }
    fields: [reasoning_content]
    request_extra: { thinking: { type: enabled, clear_thinking: false } }
  - match: { local: true }
    fields: [reasoning_content, reasoning]
`;
}

export const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Get weather information for a location",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** routes.yaml: `demo`, and the DeepSeek emulator as `deepseek-reasoner` (and other models, `other-reasoner`, `deepseek-v4-pro`) with DeepSeek's carrier route, plus Claude's names (`claude-*`) aliased to it. */
export function deepseekRoutes(baseUrl: string): string {
  return `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: "${baseUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: other-reasoner, provider: deepseek, model: deepseek-v4-flash }
  - { name: deepseek-v4-pro, provider: deepseek, model: deepseek-v4-pro }
  - { name: "claude-*", provider: deepseek, model: deepseek-reasoner }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
# the emulator is on loopback: spelled as api.deepseek.com's shipped dialect spells it
dialects:
  - match: { provider: deepseek }
    effort: reasoning_effort
    disable: thinking
    developer_role: system
`;
}
