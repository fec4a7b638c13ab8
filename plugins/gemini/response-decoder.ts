import { randomBytes } from "node:crypto";
import { type JsonObject, readArray, readObject, readString, requireObject, type StreamPart, type Usage } from "../../src/providers/plugin-api.js";
import { addPart, signedCall, type LayoutPart } from "./parts-layout.js";

/**
 * Gemini's answer → canonical parts. A streamed answer is a series of whole
 * `GenerateContentResponse`s, so one decoder serves both modes. Thought
 * summaries (`thought: true`) are reasoning; every `thoughtSignature` is
 * kept on its part in the layout. Each change of the layout is emitted as a
 * whole `native-record` (the plugin's `mergeNative` keeps the latest), so
 * a stream cut short still stores what it carried.
 */
export class GeminiDecoder {
  private readonly layout: LayoutPart[] = [];
  private toolCount = 0;
  private sawMetadata = false;

  chunk(body: JsonObject): StreamPart[] {
    const parts: StreamPart[] = [];
    if (!this.sawMetadata && (body.responseId || body.modelVersion)) {
      parts.push({ type: "response-metadata", id: readString(body.responseId), model: readString(body.modelVersion) });
      this.sawMetadata = true;
    }
    const candidates = readArray(body.candidates);
    const candidate = candidates === undefined ? undefined : readObject(candidates[0]);
    let changed = false;
    for (const part of readArray(readObject(candidate?.content)?.parts) ?? []) {
      changed = this.part(requireObject(part, "a content part"), parts) || changed;
    }
    if (changed) parts.push({ type: "native-record", record: { parts: this.layout.map((part) => ({ ...part })) } });
    const logprobs = chatLogprobs(readObject(candidate?.logprobsResult));
    if (logprobs) parts.push({ type: "logprobs", content: logprobs });
    const usage = readObject(body.usageMetadata);
    if (usage) parts.push({ type: "usage", usage: toUsage(usage) });
    const reason = readString(candidate?.finishReason) ?? readString(readObject(body.promptFeedback)?.blockReason);
    if (reason) parts.push({ type: "finish", reason: this.finishReason(reason) });
    return parts;
  }

  /** One part; true when the layout changed. */
  private part(part: JsonObject, parts: StreamPart[]): boolean {
    const signature = readString(part.thoughtSignature);
    const call = readObject(part.functionCall);
    if (call) {
      const nativeId = readString(call.id) || undefined;
      // Gemini 2.x gives calls no id; clients need one to answer them
      const id = nativeId ?? `call_${randomBytes(12).toString("hex")}`;
      parts.push({ type: "tool-call-delta", index: this.toolCount++, id, name: readString(call.name), arguments: JSON.stringify(call.args ?? {}) });
      const native = nativeId !== undefined;
      addPart(this.layout, signedCall(id, native, signature, readObject(call.args) ?? {}));
      return true;
    }
    if (typeof part.text !== "string") return false; // inlineData, executableCode…: not carried
    if (part.thought === true) {
      if (part.text) parts.push({ type: "reasoning-delta", text: part.text });
      // an unsigned summary is display only; a signed one goes back with its signature
      if (signature === undefined) return false;
      addPart(this.layout, { type: "thought", text: part.text, thoughtSignature: signature });
      return true;
    }
    if (part.text) parts.push({ type: "text-delta", text: part.text });
    if (!part.text && signature === undefined) return false;
    addPart(this.layout, signature === undefined ? { type: "text", text: part.text } : { type: "text", text: part.text, thoughtSignature: signature });
    return true;
  }

  private finishReason(reason: string): string {
    if (reason === "STOP") return this.toolCount > 0 ? "tool_calls" : "stop";
    if (reason === "MAX_TOKENS") return "length";
    if (["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"].includes(reason)) return "content_filter";
    return reason.toLowerCase();
  }
}

/**
 * A candidate's `logprobsResult` in OpenAI's chat shape: each chosen token
 * with its log probability and UTF-8 bytes, and the alternatives Gemini
 * gave at that step (`topCandidates[i]`) as its `top_logprobs`.
 */
function chatLogprobs(result: JsonObject | undefined): JsonObject[] | undefined {
  const chosen = readArray(result?.chosenCandidates);
  if (!chosen || chosen.length === 0) return undefined;
  const top = readArray(result?.topCandidates) ?? [];
  return chosen.map((entry, step) => ({
    ...tokenLogprob(readObject(entry)),
    top_logprobs: (readArray(readObject(top[step])?.candidates) ?? []).map((alternative) => tokenLogprob(readObject(alternative))),
  }));
}

function tokenLogprob(candidate: JsonObject | undefined): JsonObject {
  const token = readString(candidate?.token) ?? "";
  return { token, logprob: num(candidate?.logProbability), bytes: [...Buffer.from(token, "utf8")] };
}

/** `usageMetadata` in OpenAI's shape: thoughts count as completion tokens, as OpenAI counts reasoning. */
function toUsage(usage: JsonObject): Usage {
  const prompt = num(usage.promptTokenCount);
  const thoughts = num(usage.thoughtsTokenCount);
  const completion = num(usage.candidatesTokenCount) + thoughts;
  const result: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(usage.totalTokenCount) || prompt + completion,
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
  if (usage.cachedContentTokenCount !== undefined) result.prompt_tokens_details = { cached_tokens: num(usage.cachedContentTokenCount) };
  return result;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
