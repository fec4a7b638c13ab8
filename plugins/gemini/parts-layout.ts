import {
  type ChatMessage,
  isJsonObject,
  type Json,
  type JsonObject,
  parseToolArguments,
  readObject,
  sameJson,
  textOf,
  shown,
} from "../../src/providers/plugin-api.js";

/**
 * The Gemini native record: a model turn's parts in order, each with the
 * `thoughtSignature` it carried. Text is kept so a stateless client's text
 * can be matched back to the parts it came in.
 */
export type LayoutPart =
  | { type: "text"; text: string; thoughtSignature?: string }
  | { type: "thought"; text: string; thoughtSignature: string }
  | { type: "function_call"; id: string; native_id: boolean; thoughtSignature?: string; args?: JsonObject };

export interface GeminiRecord {
  parts: LayoutPart[];
}

/**
 * The documented placeholder for a function call whose signature was never
 * seen (history from another provider or client): Gemini 3 accepts it in
 * place of a real one (ai.google.dev/gemini-api/docs/thought-signatures, FAQ).
 */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";

/**
 * Folds a streamed part into the layout (mutating it). Streamed text arrives
 * in fragments that make one part: an unsigned fragment extends the open
 * text part; a signed non-empty fragment ends it (Gemini signs the last
 * part); a signed empty fragment — the trailing part at the end of a stream —
 * stays a part of its own, as the provider sent it.
 */
export function addPart(layout: LayoutPart[], part: LayoutPart): void {
  const last = layout.at(-1);
  if (part.type === "text") {
    const open = last?.type === "text" && last.thoughtSignature === undefined;
    if (part.thoughtSignature === undefined) {
      if (!part.text) return;
      if (open) last.text += part.text;
      else layout.push({ ...part });
      return;
    }
    if (part.text && open) {
      last.text += part.text;
      last.thoughtSignature = part.thoughtSignature;
      return;
    }
  }
  layout.push({ ...part });
}

/**
 * A signed call's arguments are kept beside its signature: Gemini binds the
 * signature to the call it signed, so a call whose arguments the client
 * reshaped (a tool schema's defaults filled in, unknown keys dropped) goes
 * back with `SKIP_SIGNATURE` instead of a signature it would refuse.
 */
export function signedCall(id: string, nativeId: boolean, signature: string | undefined, args: JsonObject): LayoutPart {
  return signature === undefined
    ? { type: "function_call", id, native_id: nativeId }
    : { type: "function_call", id, native_id: nativeId, thoughtSignature: signature, args };
}

/** The record read tolerantly: unknown parts are skipped. */
export function readLayout(record: JsonObject | undefined): LayoutPart[] | undefined {
  if (!record || !Array.isArray(record.parts)) return undefined;
  return record.parts.filter((part: Json): part is JsonObject & LayoutPart => {
    if (!isJsonObject(part)) return false;
    if (part.type === "text") return typeof part.text === "string";
    if (part.type === "thought") return typeof part.text === "string" && typeof part.thoughtSignature === "string";
    return part.type === "function_call" && typeof part.id === "string";
  });
}

/**
 * A model turn's wire parts. Every stored signature returns on its part,
 * exactly (text parts, the trailing empty-text part, function calls). Text
 * and calls come from the client's message; when the client's text no longer
 * equals the stored text, its text replaces the stored text parts and their
 * signatures, which belonged to the old text. A turn with function calls of
 * which none is signed gets `SKIP_SIGNATURE` on the first (`onSkip` is told).
 */
export function modelParts(message: ChatMessage, layout: LayoutPart[] | undefined, needsSignature: boolean, onSkip: (name: string) => void): JsonObject[] {
  const clientText = textOf(message.content);
  const calls = message.tool_calls ?? [];
  const byId = new Map(calls.map((call) => [call.id, call]));
  const used = new Set<string>();
  const parts: JsonObject[] = [];
  const callPart = (id: string, nativeId: boolean, signature: string | undefined, signedArgs?: JsonObject): JsonObject | undefined => {
    const call = byId.get(id);
    if (!call || used.has(id)) return undefined;
    used.add(id);
    const args = parseToolArguments(call.function.arguments);
    const functionCall: JsonObject = { name: call.function.name, args };
    if (nativeId) functionCall.id = id;
    const part: JsonObject = { functionCall };
    if (signature !== undefined && signedArgs !== undefined && !sameJson(args, signedArgs)) {
      part.thoughtSignature = SKIP_SIGNATURE;
      onSkip(call.function.name);
    } else if (signature !== undefined) part.thoughtSignature = signature;
    return part;
  };

  const stored = layout ?? [];
  const storedText = stored.map((part) => (part.type === "text" ? part.text : "")).join("");
  const keepStored = layout !== undefined && storedText.trimEnd() === clientText.trimEnd();
  let textPlaced = false;
  for (const part of stored) {
    if (part.type === "thought") parts.push({ text: part.text, thought: true, thoughtSignature: part.thoughtSignature });
    else if (part.type === "text") {
      if (keepStored) parts.push(part.thoughtSignature === undefined ? { text: part.text } : { text: part.text, thoughtSignature: part.thoughtSignature });
      else if (!textPlaced && clientText) parts.push({ text: clientText });
      textPlaced = true;
    } else {
      const built = callPart(part.id, part.native_id, part.thoughtSignature, readObject(part.args));
      if (built) parts.push(built);
    }
  }
  if (!textPlaced && clientText && !keepStored) parts.unshift({ text: clientText });
  for (const call of calls) {
    const built = callPart(call.id, false, undefined);
    if (built) parts.push(built);
  }
  const functionCalls = parts.filter((part) => part.functionCall);
  if (needsSignature && functionCalls.length > 0 && !functionCalls.some((part) => typeof part.thoughtSignature === "string")) {
    functionCalls[0].thoughtSignature = SKIP_SIGNATURE;
    onSkip(shown(readObject(functionCalls[0].functionCall)?.name));
  }
  return parts;
}
