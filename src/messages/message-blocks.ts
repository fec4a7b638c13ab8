import type { DataFrame } from "../api/sse.js";
import type { Json, JsonObject, StreamPart } from "../plugins/contract.js";
import { parseToolArguments } from "../plugins/tool-arguments.js";

/** Where the blocks' stream events go: an SSE stream, or nowhere for a non-streaming answer. */
export interface BlockSink {
  /** One named event; `json` is its serialised data. */
  event(name: string, json: string): void;
  /** A content_block_delta whose constant bytes are `frame` and whose only new string is `json` (the delta's value). */
  delta(frame: DataFrame, json: string): void;
}

const SILENT: BlockSink = { event() {}, delta() {} };

/** Makes the signature of a thinking block once it is whole: its text, and the reasoning details the turn has sent so far. */
export type ThinkingSigner = (reasoningText: string, reasoningDetails: readonly Json[]) => string;

type Block =
  | { kind: "thinking"; index: number; thinking: string; signature: string }
  | { kind: "redacted_thinking"; index: number; data: string }
  | { kind: "text"; index: number; text: string }
  | { kind: "tool_use"; index: number; id: string; name: string; input: string };

/**
 * Canonical stream parts as Anthropic content blocks, in the order they
 * arrive: each burst of reasoning is a `thinking` block, of text a `text`
 * block, each tool call a `tool_use` block; a block is closed
 * (`content_block_stop`) before the next one starts, as Anthropic streams
 * them. The same fold serves streaming and non-streaming answers, so both
 * give the client the same blocks.
 */
export class MessageBlocks {
  private readonly blocks: Block[] = [];
  private open: Block | undefined;
  private readonly frames = new Map<Block, DataFrame>();
  /** Upstream tool-call index → its block. */
  private readonly calls = new Map<number, Extract<Block, { kind: "tool_use" }>>();
  private readonly details: Json[] = [];
  finishReason: string | undefined;

  /**
   * @param sign the signature of a thinking block carrierd closes; undefined
   * on an Anthropic route, whose blocks keep the upstream's own signatures
   * (read from the plugin's native record as each upstream block closes).
   */
  constructor(
    private readonly sign: ThinkingSigner | undefined,
    private readonly sink: BlockSink = SILENT,
    /** `thinking.display: omitted`: thinking blocks go out with their signature and no text (the turn still stores it all). */
    private readonly omitThinkingText = false,
  ) {}

  add(part: StreamPart): void {
    switch (part.type) {
      case "reasoning-delta":
        if (!part.text) return;
        if (this.open?.kind !== "thinking") this.start({ kind: "thinking", index: this.blocks.length, thinking: "", signature: "" });
        (this.open as Extract<Block, { kind: "thinking" }>).thinking += part.text;
        if (!this.omitThinkingText) this.sink.delta(this.frameOf(this.open!, "thinking_delta", "thinking"), JSON.stringify(part.text));
        return;
      case "text-delta":
        if (!part.text) return;
        if (this.open?.kind !== "text") this.start({ kind: "text", index: this.blocks.length, text: "" });
        (this.open as Extract<Block, { kind: "text" }>).text += part.text;
        this.sink.delta(this.frameOf(this.open!, "text_delta", "text"), JSON.stringify(part.text));
        return;
      case "tool-call-delta":
        this.addToolFragment(part);
        return;
      case "reasoning-details-delta":
        this.details.push(...part.details);
        return;
      case "native-record":
        if (!this.sign) this.addUpstreamBlocks(part.record);
        return;
      case "finish":
        this.finishReason = part.reason;
        return;
      default:
        return;
    }
  }

  /** Closes the last block and returns every block as the final message lists it. */
  finish(): JsonObject[] {
    this.close();
    return this.blocks.map((block) => blockOf(block, this.omitThinkingText));
  }

  private addToolFragment(part: Extract<StreamPart, { type: "tool-call-delta" }>): void {
    let call = this.calls.get(part.index);
    if (!call) {
      call = { kind: "tool_use", index: this.blocks.length, id: part.id ?? "", name: part.name ?? "", input: "" };
      this.calls.set(part.index, call);
      this.start(call);
    } else {
      if (part.id && !call.id) call.id = part.id;
      if (part.name && !call.name) call.name = part.name;
    }
    if (!part.arguments) return;
    call.input += part.arguments;
    // a fragment of a call whose block was closed already (an upstream that interleaves parallel calls) is kept for the final message only
    if (this.open === call) this.sink.delta(this.frameOf(call, "input_json_delta", "partial_json"), JSON.stringify(part.arguments));
  }

  /**
   * An Anthropic route's blocks as the plugin records them when the upstream
   * closes each: a thinking block's signature, verbatim, and a
   * redacted_thinking block, which arrives whole and is passed on as it came.
   */
  private addUpstreamBlocks(record: JsonObject): void {
    if (!Array.isArray(record.content)) return;
    for (const stored of record.content) {
      if (!stored || typeof stored !== "object" || Array.isArray(stored)) continue;
      if (stored.type === "thinking" && typeof stored.signature === "string") {
        if (this.open?.kind !== "thinking") this.start({ kind: "thinking", index: this.blocks.length, thinking: "", signature: "" }); // a thinking block with no text (display omitted)
        (this.open as Extract<Block, { kind: "thinking" }>).signature = stored.signature;
        this.close();
      } else if (stored.type === "redacted_thinking" && typeof stored.data === "string") {
        this.start({ kind: "redacted_thinking", index: this.blocks.length, data: stored.data });
        this.close();
      }
    }
  }

  private start(block: Block): void {
    this.close();
    this.blocks.push(block);
    this.open = block;
    const opening =
      block.kind === "thinking"
        ? { type: "thinking", thinking: "", signature: "" }
        : block.kind === "redacted_thinking"
          ? { type: "redacted_thinking", data: block.data }
          : block.kind === "text"
            ? { type: "text", text: "" }
            : { type: "tool_use", id: block.id, name: block.name, input: {} };
    this.sink.event("content_block_start", JSON.stringify({ type: "content_block_start", index: block.index, content_block: opening }));
  }

  private close(): void {
    const block = this.open;
    if (!block) return;
    this.open = undefined;
    if (block.kind === "thinking") {
      if (this.sign) block.signature = this.sign(block.thinking, this.details);
      if (block.signature)
        this.sink.event(
          "content_block_delta",
          JSON.stringify({ type: "content_block_delta", index: block.index, delta: { type: "signature_delta", signature: block.signature } }),
        );
    }
    this.frames.delete(block);
    this.sink.event("content_block_stop", `{"type":"content_block_stop","index":${block.index}}`);
  }

  /** The constant bytes of one block's deltas, encoded once per block. */
  private frameOf(block: Block, deltaType: string, field: string): DataFrame {
    let frame = this.frames.get(block);
    if (!frame) {
      frame = {
        before: Buffer.from(
          `event: content_block_delta\ndata: {"type":"content_block_delta","index":${block.index},"delta":{"type":"${deltaType}","${field}":`,
        ),
        after: Buffer.from("}}\n\n"),
      };
      this.frames.set(block, frame);
    }
    return frame;
  }
}

function blockOf(block: Block, omitText: boolean): JsonObject {
  switch (block.kind) {
    case "thinking":
      return { type: "thinking", thinking: omitText ? "" : block.thinking, signature: block.signature };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: parseToolArguments(block.input) };
  }
}
