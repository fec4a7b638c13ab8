import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * The providers the dashboard tests send to: the demo model, `strictp`
 * (an OpenAI-compatible upstream that refuses `reasoning` on an assistant
 * message, in the phrasing of a pydantic-validated API: the gateway records a
 * verdict and retries without it) and `broken` (an upstream that answers
 * every request with a 503, as an overloaded one does).
 */
export async function startDashboardUpstreams(): Promise<OpenAIUpstream> {
  return startOpenAIUpstream({
    strict: {
      strictp: {
        fields: ["reasoning"],
        status: 400,
        body: (index, field) =>
          JSON.stringify({ error: { message: `Extra inputs are not permitted, field: 'messages[${index}].${field}'`, type: "invalid_request_error" } }),
      },
    },
    fixedErrors: {
      broken: { status: 503, body: JSON.stringify({ error: { message: "The server is overloaded, try again later.", type: "server_error", code: null } }) },
    },
  });
}

export function dashboardRoutes(upstream: OpenAIUpstream, demoDelayMs = 0): string {
  return `version: 1
providers:
  demo: { plugin: demo }
  strictp: { plugin: openai-compatible, base_url: "${upstream.baseUrl("strictp")}" }
  broken: { plugin: openai-compatible, base_url: "${upstream.baseUrl("broken")}" }
models:
  - { name: demo, provider: demo, model: demo-reasoner${demoDelayMs > 0 ? `, params: { delay_ms: ${demoDelayMs} }` : ""} }
  - { name: "strictp/*", provider: strictp }
  - { name: "broken/*", provider: broken }
carriers:
  - match: { provider: strictp }
    fields: [reasoning_content, reasoning]
  - match: {}
    fields: [reasoning_content]
`;
}
