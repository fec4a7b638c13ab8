/**
 * The unknown-field classifier for OpenAI-style upstreams (docs/sessions-and-replay.md#unknown-field-fallback-verdicts): from an
 * upstream 4xx, names the carrier field the provider refused as unknown or
 * not permitted — only when the message really says so, in the providers'
 * own phrasings (Mistral, Groq, Cerebras and the others as they answer, and hermes-agent's `agent/turn_recovery.py`, https://github.com/NousResearch/hermes-agent):
 *
 * - Mistral 422: `{"detail":[{"type":"extra_forbidden","loc":["body","messages",N,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted"}]}`
 * - Groq 400: `'messages.4' : ... property 'reasoning_content' is unsupported`
 * - Cerebras 400: `messages.2.assistant.reasoning_content: property '...' is unsupported`
 * - Gemini (native and OpenAI-compat): `Unknown name "reasoning" at 'messages[1]': Cannot find field.`
 * - Anthropic / Bedrock / pydantic gateways: `Extra inputs are not permitted, field: 'messages[8].reasoning'`
 * - OpenAI: `Unrecognized request argument supplied: reasoning_details`
 */

/** Case-insensitive phrases that mean "this field is not part of my schema". */
const UNKNOWN_FIELD_PHRASES = [
  "extra inputs are not permitted",
  "extra_forbidden",
  "is unsupported",
  "no such field",
  "unknown field",
  "unrecognized request argument",
  "unrecognized field",
  "unknown parameter",
  "unexpected field",
  "additional propert",
  "unknown key",
  "cannot find field",
  "unknown name",
  "is not supported with this model",
];

/** Statuses that never mean "unknown field": auth, permission (region), rate limit, payload size. */
const NEVER = new Set([401, 402, 403, 407, 408, 413, 429]);

const NAMED: Record<"reasoning_content" | "reasoning_details", RegExp> = {
  reasoning_content: /(?<![\w])reasoning_content(?![\w])/i,
  reasoning_details: /(?<![\w])reasoning_details(?![\w])/i,
};

/** A bare `reasoning` counts only inside a messages path: top-level `reasoning` is OpenRouter's request option. */
const BARE_REASONING_IN_MESSAGES = [/messages[^\n]{0,80}?(?<![\w])reasoning(?![\w])/i, /(?<![\w])reasoning(?![\w])["'\\]*\s+at\s+["'\\]*messages/i];

export function classifyOpenAIError(status: number, body: string, sentFields: readonly string[]): string | undefined {
  if (status < 400 || status > 499 || NEVER.has(status)) return undefined;
  const text = `${body}\n${messagesOf(body).join("\n")}`;
  const lower = text.toLowerCase();
  if (!UNKNOWN_FIELD_PHRASES.some((phrase) => lower.includes(phrase))) return undefined;
  for (const field of ["reasoning_content", "reasoning_details"] as const) {
    if (sentFields.includes(field) && NAMED[field].test(text)) return field;
  }
  if (sentFields.includes("reasoning") && BARE_REASONING_IN_MESSAGES.some((pattern) => pattern.test(text))) return "reasoning";
  return undefined;
}

/** Every string inside a JSON body (error messages nest differently per provider); none when it is not JSON. */
function messagesOf(body: string): string[] {
  try {
    const found: string[] = [];
    const parsed: unknown = JSON.parse(body);
    collect(parsed, found, 0);
    return found;
  } catch {
    return [];
  }
}

function collect(value: unknown, found: string[], depth: number): void {
  if (depth > 16) return;
  if (typeof value === "string") found.push(value);
  else if (Array.isArray(value)) {
    // Mistral's loc: ["body","messages",0,"assistant","reasoning_content"] reads as a path
    if (value.every((item) => typeof item === "string" || typeof item === "number")) found.push(value.join("."));
    for (const item of value) collect(item, found, depth + 1);
  } else if (value && typeof value === "object") for (const item of Object.values(value)) collect(item, found, depth + 1);
}
