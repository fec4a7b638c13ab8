import type { JsonObject } from "./contract.js";

/**
 * Tool-call arguments (OpenAI's JSON string) as the object native APIs
 * (Anthropic `input`, Gemini `args`, Bedrock `toolUse.input`) want; an empty
 * or broken string, or JSON that is not an object, is `{}`.
 */
export function parseToolArguments(text: string | undefined): JsonObject {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : {};
  } catch {
    return {};
  }
}
