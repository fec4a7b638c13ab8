import { type ChatRequest, type JsonObject, readObject } from "../../src/providers/plugin-api.js";

/**
 * OpenAI function tools → Anthropic tools. A tool that is already in
 * Anthropic's shape (a server tool such as `web_search_20250305`, or a
 * client tool with `input_schema`) passes through untouched.
 */
export function convertTools(tools: ChatRequest["tools"]): JsonObject[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool) => {
    const fn = tool.type === "function" ? readObject(tool.function) : undefined;
    if (!fn) return tool;
    const converted: JsonObject = { name: fn.name, input_schema: fn.parameters ?? { type: "object", properties: {} } };
    if (typeof fn.description === "string") converted.description = fn.description;
    if (tool.cache_control) converted.cache_control = tool.cache_control;
    return converted;
  });
}

/**
 * `tool_choice` and `parallel_tool_calls` → Anthropic's `tool_choice`
 * (`auto` | `any` | `none` | `{type:"tool", name}`, with
 * `disable_parallel_tool_use`). Nothing is sent when the client chose nothing.
 */
export function convertToolChoice(choice: unknown, parallel: unknown): JsonObject | undefined {
  let converted: JsonObject | undefined;
  if (choice === "auto") converted = { type: "auto" };
  else if (choice === "required") converted = { type: "any" };
  else if (choice === "none") converted = { type: "none" };
  else {
    const named = readObject(readObject(choice)?.function);
    if (typeof named?.name === "string") converted = { type: "tool", name: named.name };
  }
  if (typeof parallel === "boolean" && converted?.type !== "none") {
    converted = { ...(converted ?? { type: "auto" }), disable_parallel_tool_use: !parallel };
  }
  return converted;
}
