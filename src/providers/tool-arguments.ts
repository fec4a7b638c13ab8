import type { JsonObject } from "./contract.js";
import { parseObject } from "../foundation/util/json-readers.js";

/**
 * Tool-call arguments (OpenAI's JSON string) as the object native APIs
 * (Anthropic `input`, Gemini `args`, Bedrock `toolUse.input`) want; an empty
 * or broken string, or JSON that is not an object, is `{}`.
 */
export function parseToolArguments(text: string | undefined): JsonObject {
  if (!text) return {};
  return parseObject(text) ?? {};
}
