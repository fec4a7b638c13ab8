import { readObject, type ChatRequest, type JsonObject, type ReasoningControls, type RequestDialect } from "../../src/providers/plugin-api.js";

/**
 * Expresses the request's reasoning controls (docs/api.md#reasoning-controls-both-apis) in the upstream's own
 * fields, as its dialect (routes.yaml `dialects`) spells them. carrierd owns
 * `reasoning_effort`: a client-sent value arrives here as `controls.effort`
 * and is re-spelled per host, so a host that rejects the field never
 * receives it. Returns `body` itself when nothing changes.
 */
export function applyReasoningControls(body: ChatRequest, controls: ReasoningControls, dialect: RequestDialect): ChatRequest {
  const disabled = !controls.enabled || controls.effort === "none";
  const effort = controls.effort && controls.effort !== "none" ? controls.effort : undefined;
  if (!disabled && !effort && !("reasoning_effort" in body)) return body;
  const { reasoning_effort: _owned, ...rest } = body;
  const out: ChatRequest = rest;

  if (disabled) {
    switch (dialect.disable) {
      case "openrouter": {
        const reasoning: JsonObject = { ...objectOr(body.reasoning), enabled: false };
        delete reasoning.effort;
        out.reasoning = reasoning;
        return out;
      }
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
  return readObject(value) ?? {};
}
