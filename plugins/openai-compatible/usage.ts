import { isJsonObject, type JsonObject, readNumber, readObject, type Usage } from "../../src/providers/plugin-api.js";

/**
 * A body's or chunk's `usage`. It is in OpenAI's shape already, so it is
 * passed on as the upstream sent it (its extra counts too, no copy). One
 * that lacks a count, or holds something else there, is read loosely: the
 * counts it has, zero for the others, the total their sum; a
 * `completion_tokens_details` that is not `{reasoning_tokens: number}` is left out.
 */
export function usageOf(body: JsonObject): Usage | undefined {
  const usage = readObject(body.usage);
  if (usage === undefined) return undefined;
  if (isUsage(usage)) return usage;
  const { completion_tokens_details: details, ...rest } = usage;
  const prompt = readNumber(usage.prompt_tokens) ?? 0;
  const completion = readNumber(usage.completion_tokens) ?? 0;
  const read: Usage = { ...rest, prompt_tokens: prompt, completion_tokens: completion, total_tokens: readNumber(usage.total_tokens) ?? prompt + completion };
  if (isJsonObject(details)) {
    const reasoning = readNumber(details.reasoning_tokens);
    if (reasoning !== undefined) read.completion_tokens_details = { reasoning_tokens: reasoning };
  }
  return read;
}

function isUsage(usage: JsonObject): usage is JsonObject & Usage {
  const details = usage.completion_tokens_details;
  return (
    typeof usage.prompt_tokens === "number" &&
    typeof usage.completion_tokens === "number" &&
    typeof usage.total_tokens === "number" &&
    (details === undefined || (isJsonObject(details) && (details.reasoning_tokens === undefined || typeof details.reasoning_tokens === "number")))
  );
}
