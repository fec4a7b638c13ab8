import { type JsonObject, readArray, readObject, readString, requireObject, type StreamPart, type Usage } from "../../src/providers/plugin-api.js";
import type { LayoutBlock } from "../anthropic/content-layout.js";

/**
 * Converse / ConverseStream answers → canonical parts. Reasoning is stored in
 * Anthropic format (as hermes-agent does, https://github.com/NousResearch/hermes-agent, `agent/bedrock_adapter.py`): `reasoningText` + `signature` →
 * `{type:"thinking", thinking, signature}`, `redactedContent` →
 * `{type:"redacted_thinking", data}` (its base64, verbatim). Each closed block
 * is one `native-record` fragment (`{content:[block]}`), as in the Anthropic plugin.
 */
export class ConverseDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  private toolCount = 0;

  /** A whole Converse response. */
  response(body: JsonObject): StreamPart[] {
    const parts: StreamPart[] = [];
    const content = readArray(readObject(readObject(body.output)?.message)?.content) ?? [];
    content.forEach((entry, index) => {
      const block = requireObject(entry, "a content block");
      const reasoning = readObject(block.reasoningContent);
      const reasoningText = readObject(reasoning?.reasoningText);
      const redacted = readString(reasoning?.redactedContent);
      const tool = readObject(block.toolUse);
      if (reasoningText) {
        parts.push(...this.delta(index, { reasoningContent: { text: readString(reasoningText.text) ?? "" } }));
        parts.push(...this.delta(index, { reasoningContent: { signature: readString(reasoningText.signature) ?? "" } }));
      } else if (redacted !== undefined) {
        parts.push(...this.delta(index, { reasoningContent: { redactedContent: redacted } }));
      } else if (typeof block.text === "string") {
        parts.push(...this.delta(index, { text: block.text }));
      } else if (tool) {
        parts.push(...this.start(index, { toolUse: { toolUseId: tool.toolUseId ?? "", name: tool.name ?? "" } }));
        parts.push(...this.delta(index, { toolUse: { input: JSON.stringify(tool.input ?? {}) } }));
      }
      parts.push(...this.stop(index));
    });
    parts.push(...this.messageStop(body));
    const usage = readObject(body.usage);
    if (usage) parts.push({ type: "usage", usage: toUsage(usage) });
    return parts;
  }

  /** One ConverseStream event. Unknown events are ignored. */
  event(type: string, payload: JsonObject): StreamPart[] {
    const index = typeof payload.contentBlockIndex === "number" ? payload.contentBlockIndex : 0;
    switch (type) {
      case "contentBlockStart":
        return this.start(index, readObject(payload.start));
      case "contentBlockDelta":
        return this.delta(index, readObject(payload.delta) ?? {});
      case "contentBlockStop":
        return this.stop(index);
      case "messageStop":
        return this.messageStop(payload);
      case "metadata": {
        const usage = readObject(payload.usage);
        return usage ? [{ type: "usage", usage: toUsage(usage) }] : [];
      }
      default:
        return [];
    }
  }

  private start(index: number, start: JsonObject | undefined): StreamPart[] {
    const tool = readObject(start?.toolUse);
    if (!tool) return [];
    const ordinal = this.toolCount++;
    this.blocks.set(index, { kind: "tool", tool: ordinal, id: readString(tool.toolUseId) ?? "", sentArguments: false });
    return [{ type: "tool-call-delta", index: ordinal, id: readString(tool.toolUseId), name: readString(tool.name), arguments: "" }];
  }

  private delta(index: number, delta: JsonObject): StreamPart[] {
    const reasoning = readObject(delta.reasoningContent);
    if (reasoning) {
      if (typeof reasoning.redactedContent === "string") {
        this.blocks.set(index, { kind: "redacted", data: reasoning.redactedContent });
        return [];
      }
      const block = this.open(index, () => ({ kind: "thinking", thinking: "", signature: "" }));
      if (block.kind !== "thinking") return [];
      if (typeof reasoning.signature === "string") block.signature += reasoning.signature;
      const text = readString(reasoning.text) ?? "";
      block.thinking += text;
      return text ? [{ type: "reasoning-delta", text }] : [];
    }
    if (typeof delta.text === "string") {
      const block = this.open(index, () => ({ kind: "text", text: "" }));
      if (block.kind !== "text") return [];
      block.text += delta.text;
      return delta.text ? [{ type: "text-delta", text: delta.text }] : [];
    }
    const input = readString(readObject(delta.toolUse)?.input);
    const block = this.blocks.get(index);
    if (input && block?.kind === "tool") {
      block.sentArguments = true;
      return [{ type: "tool-call-delta", index: block.tool, arguments: input }];
    }
    return [];
  }

  private stop(index: number): StreamPart[] {
    const block = this.blocks.get(index);
    if (!block) return [];
    this.blocks.delete(index);
    const parts: StreamPart[] = [];
    let stored: LayoutBlock;
    switch (block.kind) {
      case "thinking":
        stored = { type: "thinking", thinking: block.thinking, signature: block.signature };
        break;
      case "redacted":
        stored = { type: "redacted_thinking", data: block.data };
        break;
      case "text":
        stored = { type: "text", text: block.text };
        break;
      case "tool":
        if (!block.sentArguments) parts.push({ type: "tool-call-delta", index: block.tool, arguments: "{}" });
        stored = { type: "tool_use", id: block.id };
        break;
    }
    parts.push({ type: "native-record", record: { content: [stored] } });
    return parts;
  }

  private messageStop(payload: JsonObject): StreamPart[] {
    const reason = readString(payload.stopReason);
    if (!reason) return [];
    return [{ type: "finish", reason: FINISH[reason] ?? reason }];
  }

  private open(index: number, create: () => OpenBlock): OpenBlock {
    let block = this.blocks.get(index);
    if (!block) {
      block = create();
      this.blocks.set(index, block);
    }
    return block;
  }
}

type OpenBlock =
  | { kind: "thinking"; thinking: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "text"; text: string }
  | { kind: "tool"; tool: number; id: string; sentArguments: boolean };

const FINISH: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
};

/** Converse usage in OpenAI's shape; cached reads and writes count as prompt tokens, as OpenAI counts them. */
function toUsage(usage: JsonObject): Usage {
  const cacheRead = num(usage.cacheReadInputTokens);
  const prompt = num(usage.inputTokens) + cacheRead + num(usage.cacheWriteInputTokens);
  const completion = num(usage.outputTokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cacheRead } };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
