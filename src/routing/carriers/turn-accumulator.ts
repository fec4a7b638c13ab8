import type { JsonObject, StreamPart, ToolCall, Usage } from "../../providers/contract.js";

/** A completed assistant turn as carrierd stores and replays it. */
export interface AssistantTurn {
  content: string;
  toolCalls: ToolCall[];
  /** The one plain reasoning text, whichever field it arrived in. */
  reasoningText: string;
  /** `reasoning_details` as the provider returns it non-streamed; undefined when none came. */
  reasoningDetails: JsonObject[] | undefined;
  /** The plugin's private record, merged from its fragments. */
  nativeRecord: JsonObject | undefined;
  usage: Usage | undefined;
  finishReason: string;
  /** The stop sequence that ended the answer, when the upstream named it. */
  stopSequence?: string;
  upstreamId: string | undefined;
  /** How the upstream says it served the answer (`service_tier`), when it says. */
  serviceTier?: string;
  /** The upstream backend's `system_fingerprint`, when it gives one. */
  systemFingerprint?: string;
  /** The answer's token log probabilities in OpenAI's chat shape, when the client asked and the upstream gave them; never stored. */
  logprobs?: JsonObject[];
}

/**
 * Folds canonical stream parts into one turn. Streamed and non-streamed
 * answers go through the same fold, so both store the same thing.
 */
export class TurnAccumulator {
  private reasoning = "";
  private content = "";
  private readonly tools: { id: string; name: string; arguments: string }[] = [];
  private details: JsonObject[] | undefined;
  private native: JsonObject | undefined;
  private usage: Usage | undefined;
  private finishReason: string | undefined;
  private stopSequence: string | undefined;
  private upstreamId: string | undefined;
  private serviceTier: string | undefined;
  private systemFingerprint: string | undefined;
  private logprobs: JsonObject[] | undefined;

  constructor(private readonly mergeNative: (collected: JsonObject | undefined, fragment: JsonObject) => JsonObject = shallowMerge) {}

  add(part: StreamPart): void {
    switch (part.type) {
      case "reasoning-delta":
        this.reasoning += part.text;
        break;
      case "text-delta":
        this.content += part.text;
        break;
      case "tool-call-delta": {
        const tool = (this.tools[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) tool.id = part.id;
        if (part.name && !tool.name) tool.name = part.name;
        if (part.arguments) tool.arguments += part.arguments;
        break;
      }
      case "reasoning-details-delta":
        for (const detail of part.details) this.addDetail(detail);
        break;
      case "native-record":
        this.native = this.mergeNative(this.native, part.record);
        break;
      case "usage":
        this.usage = part.usage;
        break;
      case "finish":
        this.finishReason = part.reason;
        if (part.stopSequence !== undefined) this.stopSequence = part.stopSequence;
        break;
      case "logprobs":
        (this.logprobs ??= []).push(...part.content);
        break;
      case "response-metadata":
        this.upstreamId ??= part.id;
        if (part.serviceTier !== undefined) this.serviceTier = part.serviceTier;
        if (part.systemFingerprint !== undefined) this.systemFingerprint = part.systemFingerprint;
        break;
    }
  }

  /**
   * Merge by `index` (docs/sessions-and-replay.md#what-is-stored): texts (and summaries) concatenate in order;
   * `signature`, `data`, `id`, `format` are kept from whichever fragment has
   * them. A Claude signature arrives as its own fragment with no text.
   */
  private addDetail(detail: JsonObject): void {
    this.details ??= [];
    const index = typeof detail.index === "number" ? detail.index : undefined;
    // xAI via OpenRouter streams its `reasoning.encrypted` item under the same index as the
    // `reasoning.summary` before it: a fragment of another type starts a new element
    const existing =
      index === undefined
        ? undefined
        : this.details.findLast((kept) => kept.index === index && (detail.type === undefined || kept.type === undefined || kept.type === detail.type));
    if (!existing) {
      this.details.push({ ...detail });
      return;
    }
    for (const [key, value] of Object.entries(detail)) {
      if ((key === "text" || key === "summary") && typeof value === "string" && typeof existing[key] === "string") {
        existing[key] = existing[key] + value;
      } else if (value !== null && value !== undefined && (existing[key] === undefined || existing[key] === null || existing[key] === "")) {
        existing[key] = value;
      }
    }
  }

  finish(): AssistantTurn {
    const toolCalls: ToolCall[] = this.tools
      .filter((tool) => tool !== undefined)
      .map((tool) => ({ id: tool.id, type: "function" as const, function: { name: tool.name, arguments: tool.arguments } }));
    return {
      content: this.content,
      toolCalls,
      reasoningText: this.reasoning,
      reasoningDetails: this.details,
      nativeRecord: this.native,
      usage: this.usage,
      finishReason: this.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      ...(this.stopSequence !== undefined && { stopSequence: this.stopSequence }),
      upstreamId: this.upstreamId,
      ...(this.serviceTier !== undefined && { serviceTier: this.serviceTier }),
      ...(this.systemFingerprint !== undefined && { systemFingerprint: this.systemFingerprint }),
      ...(this.logprobs !== undefined && { logprobs: this.logprobs }),
    };
  }
}

function shallowMerge(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  return { ...collected, ...fragment };
}
