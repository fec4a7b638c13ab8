/** A routes.yaml whose models are the fault upstream's behaviours, with the deadlines a test chooses (seconds). */
export function faultRoutes(baseUrl: string, deadlines = ""): string {
  const models = ["ok", "cut", "corrupt", "stall", "stall-after-head", "trickle", "rate-limit", "flood"];
  return `version: 1
providers:
  faulty: { plugin: openai-compatible, base_url: ${baseUrl}${deadlines ? `, deadlines: ${deadlines}` : ""} }
  nowhere: { plugin: openai-compatible, base_url: http://127.0.0.1:9/v1 }
models:
${models.map((model) => `  - { name: ${model}, provider: faulty, model: ${model} }`).join("\n")}
  - { name: unreachable, provider: nowhere, model: gone }
carriers:
  - match: {}
    fields: [reasoning_content]
`;
}
