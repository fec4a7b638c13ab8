import type { OpenAIUpstream } from "../support/openai-upstream.js";
import { LOOK_ALIKES, PHRASINGS } from "./phrasings.js";

/** Providers that will reject a carrier, each behind a route that (wrongly, on purpose) sends it. */
export const BUILT_IN_STRICT: Record<string, { fields: string; recorded: string[] }> = {
  // Mistral's 422 lists every offending key; reasoning_content is among them, so everything sent is recorded
  // (Magistral reasons in content chunks: plain text only, no reasoning_details to send)
  mistral: { fields: "[reasoning_content, reasoning, reasoning_details]", recorded: ["reasoning_content", "reasoning"] },
  groq: { fields: "[reasoning_content, reasoning]", recorded: ["reasoning_content", "reasoning"] },
  cerebras: { fields: "[reasoning_content]", recorded: ["reasoning_content"] },
};

export function fallbackRoutes(upstream: OpenAIUpstream): string {
  const providers = [...Object.keys(BUILT_IN_STRICT), ...Object.keys(PHRASINGS), ...Object.keys(LOOK_ALIKES).map((name) => `alike${name}`), "echo", "double"];
  const fields: Record<string, string> = {
    ...Object.fromEntries(Object.entries(BUILT_IN_STRICT).map(([name, entry]) => [name, entry.fields])),
    ...Object.fromEntries(Object.entries(PHRASINGS).map(([name, entry]) => [name, entry.routeFields])),
    ...Object.fromEntries(Object.keys(LOOK_ALIKES).map((name) => [`alike${name}`, "[reasoning_content, reasoning]"])),
    double: "[reasoning_content]",
  };
  return `version: 1
providers:
${providers.map((name) => `  ${name}: { plugin: openai-compatible, base_url: "${upstream.baseUrl(name)}" }`).join("\n")}
models:
${providers.map((name) => `  - { name: "${name}/*", provider: ${name} }`).join("\n")}
carriers:
  - match: { provider: echo }
    fields: [reasoning_content]
    must_echo: true
${Object.entries(fields)
  .map(([name, list]) => `  - match: { provider: ${name} }\n    fields: ${list}`)
  .join("\n")}
  - match: {}
    fields: [reasoning_content]
`;
}
