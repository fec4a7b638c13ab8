import type { RouteTable } from "../routes/route-table.js";

const CARRIERD_VERSION = "0.1.0";

/** GET /v1/models: the names clients can ask for (globs such as `openrouter/*` are listed as written). */
export function modelsBody(table: RouteTable): object {
  const created = Math.floor(Date.now() / 1000);
  return {
    object: "list",
    data: table.models.map((model) => ({
      id: model.name,
      object: "model",
      created,
      owned_by: model.provider,
      ...(model.description ? { description: model.description } : {}),
    })),
  };
}

/** GET /v1/capabilities (SPEC §7). */
export function capabilitiesBody(table: RouteTable): object {
  return {
    object: "capabilities",
    version: CARRIERD_VERSION,
    routes_revision: table.revision,
    auth: { type: "bearer", required: true },
    features: {
      reasoning_streaming: true,
      responses_api: true,
      reasoning_replay: true,
      websocket_events: true,
      session_header: "X-Session-Id",
      reasoning_field: "reasoning_content",
      model_options: ["reasoning.enabled", "reasoning.effort", "replay"],
    },
    endpoints: ["/v1/chat/completions", "/v1/responses", "/v1/models", "/v1/capabilities", "/v1/events", "/health", "/metrics", "/dashboard"],
  };
}
