import { type Json, type JsonObject, readString, type UpstreamCall } from "../../src/providers/plugin-api.js";
import { convertMessages } from "./messages.js";
import { convertToolChoice, convertTools } from "./tools.js";

/** `max_tokens` is required by Anthropic; used when the client sets none. */
const DEFAULT_MAX_TOKENS = 4096;

/**
 * `reasoning_effort` → `thinking.budget_tokens`. Anthropic's minimum budget is
 * 1024; the rest doubles per step so "high" leaves room for long proofs.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768, max: 32768 };

/** `reasoning_effort` → `output_config.effort` for models on adaptive thinking. */
const ADAPTIVE_EFFORT: Readonly<Record<string, string>> = { minimal: "low", low: "low", medium: "medium", high: "high", xhigh: "max", max: "max" };

/**
 * Anthropic request keys a route may set through `models[].params` or
 * `request_extra` (the core merges those into the canonical body); they are
 * already in the right place, at the top level. Every other key that is not
 * an OpenAI parameter we translate is dropped: the Messages API answers
 * "Extra inputs are not permitted" to anything it does not know. `metadata`
 * and `service_tier` are not passed through: OpenAI clients send their own,
 * differently shaped, under the same names (a chat `service_tier` is mapped,
 * SERVICE_TIERS).
 */
const NATIVE_KEYS = ["thinking", "top_k", "output_config", "context_management", "container", "mcp_servers", "inference_geo"];

/**
 * A chat `service_tier` Anthropic has a word for: `auto` (priority capacity
 * when the organisation has it) and OpenAI's `default`, standard capacity
 * only. `flex`, `scale` and `priority` have none: not sent.
 */
const SERVICE_TIERS: Readonly<Record<string, string>> = { auto: "auto", default: "standard_only" };

/** The canonical request (OpenAI chat) as an Anthropic Messages body. */
export function buildMessagesBody(call: UpstreamCall, note: (message: string) => void): JsonObject {
  const source = call.body;
  const { system, messages } = convertMessages(source.messages);
  const body: JsonObject = { model: call.model, messages };
  if (system.length > 0) body.system = system;
  for (const key of NATIVE_KEYS) if (source[key] !== undefined) body[key] = source[key] as Json;

  const tools = convertTools(source.tools);
  if (tools) body.tools = tools;
  const toolChoice = convertToolChoice(source.tool_choice, source.parallel_tool_calls);
  if (toolChoice && tools) body.tool_choice = toolChoice;
  const stop = source.stop;
  if (typeof stop === "string") body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop.filter((sequence) => typeof sequence === "string"); // strings, as the request schema says
  if (typeof source.temperature === "number") body.temperature = source.temperature;
  if (typeof source.top_p === "number") body.top_p = source.top_p;
  // OpenAI's `safety_identifier` names the end user as `user` did before it
  const user = readString(source.user) ?? readString(source.safety_identifier);
  if (user !== undefined) body.metadata = { user_id: user };
  const tier = SERVICE_TIERS[readString(source.service_tier) ?? ""];
  if (tier) body.service_tier = tier;

  const requested = numberOf(source.max_tokens) ?? numberOf(source.max_completion_tokens) ?? DEFAULT_MAX_TOKENS;
  body.max_tokens = requested;
  applyThinking(body, call, requested, note);
  if (call.stream) body.stream = true;
  return body;
}

/**
 * The request's reasoning controls in Anthropic's form (docs/plugins.md#7-worked-example-pluginsanthropic):
 * reasoning off → no `thinking`; an effort → a budget (or `output_config.effort`
 * on adaptive thinking); `max_tokens` always stays above `budget_tokens`, with
 * the client's `max_tokens` left for the answer. With thinking on, Anthropic
 * refuses `temperature`/`top_k` and a `top_p` below 0.95, so those go.
 */
function applyThinking(body: JsonObject, call: UpstreamCall, requested: number, note: (message: string) => void): void {
  const effort = call.reasoning.effort?.toLowerCase();
  if (!call.reasoning.enabled || effort === "none") {
    delete body.thinking;
    return;
  }
  let thinking = isObject(body.thinking) ? { ...body.thinking } : undefined;
  if (effort && thinking?.type === "adaptive") {
    const level = ADAPTIVE_EFFORT[effort];
    if (level) body.output_config = { ...(isObject(body.output_config) ? body.output_config : {}), effort: level };
  } else if (effort && THINKING_BUDGETS[effort] && thinking?.type !== "disabled") {
    thinking = { ...thinking, type: "enabled", budget_tokens: THINKING_BUDGETS[effort] };
  }
  if (!thinking) return;
  body.thinking = thinking;
  if (thinking.type === "disabled") return;
  const budget = numberOf(thinking.budget_tokens);
  if (budget !== undefined && requested <= budget) body.max_tokens = budget + requested;
  for (const key of ["temperature", "top_k"] as const) {
    if (body[key] !== undefined && !(key === "temperature" && body[key] === 1)) {
      delete body[key];
      note(`${key} dropped: Anthropic does not accept it with thinking enabled`);
    }
  }
  if (typeof body.top_p === "number" && body.top_p < 0.95) {
    delete body.top_p;
    note("top_p below 0.95 dropped: Anthropic does not accept it with thinking enabled");
  }
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
