import { type ChatRequest, type Json, type JsonObject, readObject, readString, type UpstreamCall } from "../../src/providers/plugin-api.js";
import { inputItemsJson } from "./input-items.js";

/** Request keys the Responses API reads under the same name as chat completions. */
const SAME_NAME = ["temperature", "top_p", "parallel_tool_calls", "metadata", "service_tier", "prompt_cache_key", "safety_identifier", "user"] as const;
/** What a summary is asked for when neither the client nor the route says: the level Codex asks for. */
const DEFAULT_SUMMARY = "auto";

/**
 * The canonical request as a Responses API body. Always stateless:
 * `store: false`, and `include: ["reasoning.encrypted_content"]` so every
 * reasoning item comes back with its blob — the only way to hand a
 * reasoning model its own reasoning on the next turn without OpenAI keeping
 * it (https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items).
 * Only keys the Responses API knows are sent; the rest of a chat body is
 * translated or left out.
 */
export function buildResponsesBody(call: UpstreamCall): string {
  const settings = JSON.stringify(responsesSettings(call));
  const input = inputItemsJson(call.body.messages, call.model, call.dialect.developerRole);
  // the settings object always has members (store, include): the input goes first, then they follow
  return `{"model":${JSON.stringify(call.model)},"input":[${input}],${settings.slice(1)}`;
}

/** Everything of the body but `model` and `input`. */
function responsesSettings(call: UpstreamCall): JsonObject {
  const source = call.body;
  const body: JsonObject = { store: false, include: ["reasoning.encrypted_content"] };
  if (call.stream) body.stream = true;
  for (const key of SAME_NAME) if (source[key] !== undefined && source[key] !== null) body[key] = source[key] as Json;
  const limit = source.max_output_tokens ?? source.max_completion_tokens ?? source.max_tokens;
  if (typeof limit === "number") body.max_output_tokens = limit;
  const tools = convertTools(source.tools);
  if (tools) {
    body.tools = tools;
    const choice = convertToolChoice(source.tool_choice);
    if (choice !== undefined) body.tool_choice = choice;
  }
  const format = textFormat(source.response_format);
  if (format) body.text = { format };
  const reasoning = reasoningOf(source, call);
  if (reasoning) body.reasoning = reasoning;
  return body;
}

/**
 * The client's reasoning controls in the Responses API's `reasoning`
 * object: `effort` from chat `reasoning_effort`, Responses `reasoning.effort`
 * or a Messages thinking budget (all arrive as `call.reasoning.effort`);
 * `summary` from Responses `reasoning.summary`, else the route's
 * `params: {reasoning: {summary}}`, else `auto`. A client that turned
 * reasoning off gets no summary, and `effort: "none"` only when it said so.
 */
function reasoningOf(source: ChatRequest, call: UpstreamCall): JsonObject | undefined {
  const configured = readObject(source.reasoning) ?? {};
  const out: JsonObject = {};
  const effort = call.reasoning.effort ?? readString(configured.effort);
  if (effort) out.effort = effort;
  const off = !call.reasoning.enabled || effort === "none";
  const summary = call.reasoning.summary ?? readString(configured.summary) ?? (configured.summary === null ? undefined : DEFAULT_SUMMARY);
  if (summary && !off) out.summary = summary;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Chat function tools → Responses function tools (flat: name, description, parameters, strict). Anything else goes as it is. */
function convertTools(tools: ChatRequest["tools"]): JsonObject[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool) => {
    const fn = tool.type === "function" ? readObject(tool.function) : undefined;
    if (!fn) return tool;
    const converted: JsonObject = { type: "function", name: fn.name ?? "" };
    if (typeof fn.description === "string") converted.description = fn.description;
    converted.parameters = fn.parameters ?? { type: "object", properties: {} };
    // chat completions' default is non-strict; the Responses API's is strict, which refuses most hand-written schemas
    converted.strict = typeof fn.strict === "boolean" ? fn.strict : false;
    return converted;
  });
}

function convertToolChoice(choice: unknown): Json | undefined {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  const name = readString(readObject(readObject(choice)?.function)?.name);
  return name === undefined ? undefined : { type: "function", name };
}

/** Chat `response_format` → Responses `text.format`. */
function textFormat(format: unknown): JsonObject | undefined {
  const object = readObject(format);
  if (object?.type === "json_object") return { type: "json_object" };
  if (object?.type !== "json_schema") return undefined;
  const schema = readObject(object.json_schema) ?? {};
  const out: JsonObject = { type: "json_schema", name: readString(schema.name) ?? "response", schema: schema.schema ?? {} };
  if (typeof schema.strict === "boolean") out.strict = schema.strict;
  if (typeof schema.description === "string") out.description = schema.description;
  return out;
}
