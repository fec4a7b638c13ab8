import {
  type JsonObject,
  parseObject,
  readArray,
  readObject,
  readString,
  requireObject,
  type StreamPart,
  UnreadableChunkError,
  UpstreamReportedError,
  type Usage,
} from "../../src/providers/plugin-api.js";
import type { LayoutBlock } from "./content-layout.js";

/**
 * Anthropic's answer → canonical parts. Streamed and non-streamed answers go
 * through the same block handling, so both store the same record: each
 * closed block becomes one `native-record` fragment (`{content:[block]}`),
 * thinking and redacted_thinking verbatim.
 */
export class AnthropicDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  private toolCount = 0;
  private inputUsage: JsonObject = {};

  /** One SSE event (`event:` name and `data:` payload); unknown events are ignored. */
  event(data: string): StreamPart[] {
    const payload = parseObject(data);
    if (!payload) {
      if (data.trim() === "") return [];
      throw new UnreadableChunkError(data); // not JSON, or not an object: dropping it would lose its content, so the turn ends incomplete
    }
    const index = typeof payload.index === "number" ? payload.index : -1;
    switch (payload.type) {
      case "message_start": {
        const message = readObject(payload.message);
        this.inputUsage = readObject(message?.usage) ?? {};
        return [metadataOf(message ?? {}, this.inputUsage)];
      }
      case "content_block_start":
        return this.open(index, readObject(payload.content_block) ?? {});
      case "content_block_delta":
        return this.delta(index, readObject(payload.delta) ?? {});
      case "content_block_stop":
        return this.close(index);
      case "message_delta": {
        const parts: StreamPart[] = [];
        const usage = readObject(payload.usage);
        if (usage) parts.push({ type: "usage", usage: toUsage({ ...this.inputUsage, ...usage }) });
        const delta = readObject(payload.delta);
        const reason = readString(delta?.stop_reason);
        if (reason) parts.push(finishOf(reason, delta?.stop_sequence));
        return parts;
      }
      case "error": {
        // a mid-stream error (overloaded_error…) ends the turn as a failure, never as a short answer
        // reported as the upstream's own, so a carried stream's client gets its error event as Anthropic sent it, and nothing after
        const error = readObject(payload.error);
        throw new UpstreamReportedError(error ?? {}, `Anthropic stream error: ${readString(error?.type) ?? "error"}: ${readString(error?.message) ?? ""}`);
      }
      default:
        return []; // ping, message_stop, and whatever Anthropic adds next
    }
  }

  /** A whole non-streaming Messages response. */
  response(body: JsonObject): StreamPart[] {
    const parts: StreamPart[] = [metadataOf(body, readObject(body.usage) ?? {})];
    readArray(body.content)?.forEach((entry, index) => {
      parts.push(...this.open(index, requireObject(entry, "a content block"), true));
      parts.push(...this.close(index));
    });
    const usage = readObject(body.usage);
    if (usage) parts.push({ type: "usage", usage: toUsage(usage) });
    const reason = readString(body.stop_reason);
    if (reason) parts.push(finishOf(reason, body.stop_sequence));
    return parts;
  }

  private open(index: number, block: JsonObject, whole = false): StreamPart[] {
    switch (block.type) {
      case "thinking": {
        const thinking = readString(block.thinking) ?? "";
        this.blocks.set(index, { kind: "thinking", thinking, signature: readString(block.signature) ?? "", verbatim: whole ? block : undefined });
        return thinking ? [{ type: "reasoning-delta", text: thinking }] : [];
      }
      case "redacted_thinking":
        // arrives whole; encrypted, so it is stored but never shown
        this.blocks.set(index, { kind: "redacted", block });
        return [];
      case "text": {
        const text = readString(block.text) ?? "";
        this.blocks.set(index, { kind: "text", text });
        return text ? [{ type: "text-delta", text }] : [];
      }
      case "tool_use": {
        const tool = this.toolCount++;
        const input = block.input && typeof block.input === "object" && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : "";
        // non-streamed input is whole in the block; streamed input arrives as input_json_delta
        this.blocks.set(index, { kind: "tool", tool, id: readString(block.id) ?? "", sentArguments: whole ? input.length > 0 : false, startInput: input });
        const parts: StreamPart[] = [{ type: "tool-call-delta", index: tool, id: readString(block.id), name: readString(block.name), arguments: "" }];
        if (whole && input) parts.push({ type: "tool-call-delta", index: tool, arguments: input });
        return parts;
      }
      default:
        return [];
    }
  }

  private delta(index: number, delta: JsonObject): StreamPart[] {
    const block = this.blocks.get(index);
    if (!block) return [];
    if (delta.type === "thinking_delta" && block.kind === "thinking") {
      const text = readString(delta.thinking) ?? "";
      block.thinking += text;
      return text ? [{ type: "reasoning-delta", text }] : [];
    }
    if (delta.type === "signature_delta" && block.kind === "thinking") {
      block.signature += readString(delta.signature) ?? "";
      return [];
    }
    if (delta.type === "text_delta" && block.kind === "text") {
      const text = readString(delta.text) ?? "";
      block.text += text;
      return text ? [{ type: "text-delta", text }] : [];
    }
    if (delta.type === "input_json_delta" && block.kind === "tool") {
      const fragment = readString(delta.partial_json) ?? "";
      if (!fragment) return [];
      block.sentArguments = true;
      return [{ type: "tool-call-delta", index: block.tool, arguments: fragment }];
    }
    return [];
  }

  private close(index: number): StreamPart[] {
    const block = this.blocks.get(index);
    if (!block) return [];
    this.blocks.delete(index);
    let stored: LayoutBlock | JsonObject;
    const parts: StreamPart[] = [];
    switch (block.kind) {
      case "thinking":
        stored = block.verbatim ?? { type: "thinking", thinking: block.thinking, signature: block.signature };
        break;
      case "redacted":
        stored = block.block;
        break;
      case "text":
        stored = { type: "text", text: block.text };
        break;
      case "tool":
        // a tool without arguments still needs a JSON object for OpenAI clients
        if (!block.sentArguments) parts.push({ type: "tool-call-delta", index: block.tool, arguments: block.startInput || "{}" });
        stored = { type: "tool_use", id: block.id };
        break;
    }
    parts.push({ type: "native-record", record: { content: [stored] } });
    return parts;
  }
}

type OpenBlock =
  | { kind: "thinking"; thinking: string; signature: string; verbatim: JsonObject | undefined }
  | { kind: "redacted"; block: JsonObject }
  | { kind: "text"; text: string }
  | { kind: "tool"; tool: number; id: string; sentArguments: boolean; startInput: string };

/**
 * Anthropic's usage in OpenAI's shape; prompt tokens include the cached ones,
 * as OpenAI counts them: those read from the cache are `cached_tokens`,
 * those written to it `cache_write_tokens` (OpenRouter's name for them).
 */
function toUsage(usage: JsonObject): Usage {
  const input = num(usage.input_tokens);
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  const prompt = input + cacheWrite + cacheRead;
  const completion = num(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  };
}

/** Anthropic's tiers in OpenAI's words: `standard` is OpenAI's `default`; `priority` and `batch` keep their names. */
const SERVICE_TIERS: Readonly<Record<string, string>> = { standard: "default" };

/** The message's id and model, and the tier its usage says it was served on. */
function metadataOf(message: JsonObject, usage: JsonObject): StreamPart {
  const tier = readString(usage.service_tier);
  const part: StreamPart = { type: "response-metadata", id: readString(message.id), model: readString(message.model) };
  if (tier !== undefined) part.serviceTier = SERVICE_TIERS[tier] ?? tier;
  return part;
}

const FINISH: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** Anthropic's stop, with the stop sequence it names when one ended the answer. */
function finishOf(reason: string, stopSequence: unknown): StreamPart {
  const matched = reason === "stop_sequence" ? readString(stopSequence) : undefined;
  return matched === undefined ? { type: "finish", reason: finishReason(reason) } : { type: "finish", reason: finishReason(reason), stopSequence: matched };
}

function finishReason(reason: string): string {
  return FINISH[reason] ?? reason;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
