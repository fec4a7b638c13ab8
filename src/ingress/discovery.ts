import type { RouteTable } from "../routing/routes/route-table.js";
import { missingCredentials, type PluginLookup } from "./provider-keys.js";
import { describeStore, type StoreChoice } from "../foundation/config/store-choice.js";

const CARRIERD_VERSION = "0.1.0";

/**
 * GET /v1/models: the model ids a client can call. A glob entry
 * (`openrouter/*`) names no model of its own and is left out, as is a model
 * whose provider lacks its key or credentials (a model picker would offer it,
 * and every request would fail); `carrierd routes check` names those. A
 * key confined to some models (`--models`) is shown only those.
 */
export function modelsBody(
  table: RouteTable,
  env: Readonly<Record<string, string | undefined>>,
  plugins: PluginLookup,
  allowed: (model: string) => boolean = () => true,
): object {
  const created = Math.floor(Date.now() / 1000);
  const seen = new Set<string>();
  const data: object[] = [];
  for (const model of table.models) {
    if (model.name.includes("*") || seen.has(model.name) || !allowed(model.name)) continue;
    seen.add(model.name); // the first entry of a name is the one requests resolve to
    const provider = table.providers.get(model.provider);
    if (!provider || missingCredentials(provider, env, plugins)) continue;
    data.push({ id: model.name, object: "model", created, owned_by: model.provider, ...(model.description ? { description: model.description } : {}) });
  }
  return { object: "list", data };
}

/** GET /v1/capabilities (docs/api.md#discovery). */
export function capabilitiesBody(table: RouteTable, store: StoreChoice = { kind: "sqlite" }, events: Record<string, unknown> = { backend: "local" }): object {
  return {
    object: "capabilities",
    version: CARRIERD_VERSION,
    routes_revision: table.revision,
    // where live events come from; a Redis URL is shown with its password masked
    events,
    // which backend keeps the state; for PostgreSQL its URL, password redacted (several gateways share one)
    store: store.kind === "sqlite" ? { backend: "sqlite" } : { backend: "postgres", url: describeStore(store) },
    auth: { type: "bearer", required: true },
    features: {
      reasoning_streaming: true,
      responses_api: true,
      // the Anthropic Messages API (/v1/messages, docs/api.md#messages-api)
      messages_api: true,
      // the Gemini API (/v1beta/models/{model}:generateContent, docs/api.md#gemini-api)
      gemini_api: true,
      reasoning_replay: true,
      // stored sessions over HTTP, each turn with its replay decision (docs/api.md#session-history)
      session_history: true,
      websocket_events: true,
      session_header: "X-Session-Id",
      reasoning_field: "reasoning_content",
      model_options: ["reasoning.enabled", "reasoning.effort", "replay"],
      // what of the Open Responses specification carrierd serves, and what it refuses with a 400
      responses: {
        open_responses_version: "2026-04-24",
        streaming: true,
        store: true,
        previous_response_id: true,
        conversation: true,
        input_items: true,
        compact: true,
        cancel: false,
        background: false,
        tools: ["function", "namespace"],
        hosted_tools: false,
        input_content: ["input_text", "input_image", "input_file"],
        include: ["reasoning.encrypted_content"],
        websocket: false,
      },
    },
    endpoints: [
      "/v1/chat/completions",
      "/v1/responses",
      "/v1/responses/{id}",
      "/v1/responses/{id}/input_items",
      "/v1/responses/{id}/cancel",
      "/v1/responses/compact",
      "/v1/messages",
      "/v1/messages/count_tokens",
      "/v1beta/models/{model}:generateContent",
      "/v1beta/models/{model}:streamGenerateContent",
      "/v1beta/models/{model}:countTokens",
      "/v1/models",
      "/v1/capabilities",
      "/v1/sessions",
      "/v1/sessions/{id}",
      "/v1/events",
      "/health",
      "/metrics",
      "/v1/stats/providers",
      "/dashboard",
    ],
  };
}
