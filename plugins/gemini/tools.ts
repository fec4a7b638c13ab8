import { type ChatRequest, type Json, type JsonObject, readObject, shown } from "../../src/providers/plugin-api.js";

/** The JSON Schema keywords Gemini's `Schema` (an OpenAPI 3.0 subset) knows; everything else is dropped. */
const KEPT = [
  "description",
  "enum",
  "format",
  "nullable",
  "required",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "title",
  "propertyOrdering",
  "minProperties",
  "maxProperties",
];

/**
 * JSON Schema → Gemini `Schema`, as Google's own SDKs convert it: upper-case
 * types, `["string","null"]` → `STRING` + `nullable`, `oneOf` → `anyOf`,
 * unsupported keywords (`additionalProperties`, `$schema`, `default`…) left out
 * so the API does not answer "Unknown name … Cannot find field".
 */
function toGeminiSchema(schema: Json): Json {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out: JsonObject = {};
  const type = schema.type;
  if (typeof type === "string") out.type = type.toUpperCase();
  else if (Array.isArray(type)) {
    const real = type.filter((entry) => entry !== "null");
    if (real.length > 0) out.type = shown(real[0]).toUpperCase();
    if (real.length < type.length) out.nullable = true;
  }
  for (const key of KEPT) if (schema[key] !== undefined && out[key] === undefined) out[key] = schema[key];
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const];
  if (schema.properties && typeof schema.properties === "object" && !Array.isArray(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, value]) => [name, toGeminiSchema(value)]));
  }
  if (schema.items !== undefined) out.items = toGeminiSchema(schema.items);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) out.anyOf = union.map(toGeminiSchema);
  return out;
}

/** OpenAI function tools → one Gemini `tools` entry of function declarations. */
export function convertTools(tools: ChatRequest["tools"]): JsonObject[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  const declarations: JsonObject[] = [];
  for (const tool of tools) {
    const fn = readObject(tool.function);
    if (tool.type !== "function" || !fn || typeof fn.name !== "string") continue;
    const declaration: JsonObject = { name: fn.name };
    if (typeof fn.description === "string") declaration.description = fn.description;
    // Gemini refuses an OBJECT schema with no properties; a function without parameters simply has none
    if (fn.parameters && !isEmptyObjectSchema(fn.parameters)) declaration.parameters = toGeminiSchema(fn.parameters);
    declarations.push(declaration);
  }
  return declarations.length > 0 ? [{ functionDeclarations: declarations }] : undefined;
}

/** `tool_choice` → `toolConfig.functionCallingConfig`. */
export function convertToolChoice(choice: unknown): JsonObject | undefined {
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  const name = readObject(readObject(choice)?.function)?.name;
  if (typeof name === "string") return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [name] } };
  return undefined;
}

function isEmptyObjectSchema(schema: Json): boolean {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return false;
  const properties = readObject(schema.properties);
  return schema.type === "object" && (!properties || Object.keys(properties).length === 0);
}
