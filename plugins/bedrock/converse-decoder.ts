import type { JsonObject, StreamPart, Usage } from "../../src/plugins/plugin-api.js";
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
    const message = ((body.output as JsonObject | undefined)?.message ?? {}) as JsonObject;
    const content = Array.isArray(message.content) ? (message.content as JsonObject[]) : [];
    content.forEach((block, index) => {
      const reasoning = block.reasoningContent as JsonObject | undefined;
      if (reasoning?.reasoningText && typeof reasoning.reasoningText === "object") {
        const text = reasoning.reasoningText as JsonObject;
        parts.push(...this.delta(index, { reasoningContent: { text: str(text.text) ?? "" } }));
        parts.push(...this.delta(index, { reasoningContent: { signature: str(text.signature) ?? "" } }));
      } else if (reasoning && typeof reasoning.redactedContent === "string") {
        parts.push(...this.delta(index, { reasoningContent: { redactedContent: reasoning.redactedContent } }));
      } else if (typeof block.text === "string") {
        parts.push(...this.delta(index, { text: block.text }));
      } else if (block.toolUse && typeof block.toolUse === "object") {
        const tool = block.toolUse as JsonObject;
        parts.push(...this.start(index, { toolUse: { toolUseId: tool.toolUseId ?? "", name: tool.name ?? "" } }));
        parts.push(...this.delta(index, { toolUse: { input: JSON.stringify(tool.input ?? {}) } }));
      }
      parts.push(...this.stop(index));
    });
    parts.push(...this.messageStop(body));
    if (body.usage && typeof body.usage === "object") parts.push({ type: "usage", usage: toUsage(body.usage as JsonObject) });
    return parts;
  }

  /** One ConverseStream event. Unknown events are ignored. */
  event(type: string, payload: JsonObject): StreamPart[] {
    const index = typeof payload.contentBlockIndex === "number" ? payload.contentBlockIndex : 0;
    switch (type) {
      case "contentBlockStart":
        return this.start(index, (payload.start ?? {}) as JsonObject);
      case "contentBlockDelta":
        return this.delta(index, (payload.delta ?? {}) as JsonObject);
      case "contentBlockStop":
        return this.stop(index);
      case "messageStop":
        return this.messageStop(payload);
      case "metadata":
        return payload.usage && typeof payload.usage === "object" ? [{ type: "usage", usage: toUsage(payload.usage as JsonObject) }] : [];
      default:
        return [];
    }
  }

  private start(index: number, start: JsonObject): StreamPart[] {
    const tool = start.toolUse as JsonObject | undefined;
    if (!tool) return [];
    const ordinal = this.toolCount++;
    this.blocks.set(index, { kind: "tool", tool: ordinal, id: str(tool.toolUseId) ?? "", sentArguments: false });
    return [{ type: "tool-call-delta", index: ordinal, id: str(tool.toolUseId), name: str(tool.name), arguments: "" }];
  }

  private delta(index: number, delta: JsonObject): StreamPart[] {
    const reasoning = delta.reasoningContent as JsonObject | undefined;
    if (reasoning) {
      if (typeof reasoning.redactedContent === "string") {
        this.blocks.set(index, { kind: "redacted", data: reasoning.redactedContent });
        return [];
      }
      const block = this.open(index, () => ({ kind: "thinking", thinking: "", signature: "" }));
      if (block.kind !== "thinking") return [];
      if (typeof reasoning.signature === "string") block.signature += reasoning.signature;
      const text = str(reasoning.text) ?? "";
      block.thinking += text;
      return text ? [{ type: "reasoning-delta", text }] : [];
    }
    if (typeof delta.text === "string") {
      const block = this.open(index, () => ({ kind: "text", text: "" }));
      if (block.kind !== "text") return [];
      block.text += delta.text;
      return delta.text ? [{ type: "text-delta", text: delta.text }] : [];
    }
    const tool = delta.toolUse as JsonObject | undefined;
    const block = this.blocks.get(index);
    if (tool && block?.kind === "tool" && typeof tool.input === "string" && tool.input) {
      block.sentArguments = true;
      return [{ type: "tool-call-delta", index: block.tool, arguments: tool.input }];
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
    const reason = str(payload.stopReason);
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

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
