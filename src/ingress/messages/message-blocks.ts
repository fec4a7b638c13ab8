import type { DataFrame } from "../sse.js";
import type { JsonObject, StreamPart } from "../../providers/contract.js";
import { parseToolArguments } from "../../providers/tool-arguments.js";

/** Where the blocks' stream events go: an SSE stream, or nowhere for a non-streaming answer. */
export interface BlockSink {
  /** One named event; `json` is its serialised data. */
  event(name: string, json: string): void;
  /** A content_block_delta whose constant bytes are `frame` and whose only new string is `json` (the delta's value). */
  delta(frame: DataFrame, json: string): void;
}

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
  /** The constant bytes of the open block's deltas: only the open block streams deltas. */
  private openFrame: DataFrame | undefined;
  /** Upstream tool-call index → its block. */
  private readonly calls = new Map<number, Extract<Block, { kind: "tool_use" }>>();
  /**
   * Events held from the first thinking block's end until the turn is sealed
   * (its signature is the envelope of the whole turn's carriers, some of
   * which arrive only as the turn ends); a number stands for the
   * signature_delta of the thinking block at that index.
   */
  private held: (HeldEvent | number)[] | undefined;

  /**
   * @param options.upstreamSignatures an Anthropic route: its thinking blocks
   * keep the upstream's own signatures (read from the plugin's native record
   * as each upstream block closes), and nothing is held.
   * @param options.omitThinkingText `thinking.display: omitted`: thinking
   * blocks go out with their signature and no text (the turn stores it all).
   * @param sink where the stream events go; none for a whole (non-streaming)
   * answer, whose blocks are folded without rendering an event: each event's
   * JSON (one per delta) would only be thrown away (docs/performance.md,
   * "Whole answers render no events").
   */
  constructor(
    private readonly options: { readonly upstreamSignatures: boolean; readonly omitThinkingText: boolean },
    private readonly sink?: BlockSink,
  ) {}

  /** Whether the answer has a thinking block that waits for the turn's signature. */
  get awaitsSignature(): boolean {
    return !this.options.upstreamSignatures && this.blocks.some((block) => block.kind === "thinking" && !block.signature);
  }

  /** Whether events are held for a signature (a thinking block has ended and is not signed yet). */
  get holding(): boolean {
    return this.held !== undefined;
  }

  /** The text of every thinking block so far: the turn's reasoning up to now. */
  get reasoningSoFar(): string {
    return this.blocks.map((block) => (block.kind === "thinking" ? block.thinking : "")).join("");
  }

  add(part: StreamPart): void {
    switch (part.type) {
      case "reasoning-delta":
        if (!part.text) return;
        if (this.open?.kind !== "thinking") this.start({ kind: "thinking", index: this.blocks.length, thinking: "", signature: "" });
        (this.open as Extract<Block, { kind: "thinking" }>).thinking += part.text;
        if (this.sink && !this.options.omitThinkingText) this.delta(this.frameOf(this.open!, "thinking_delta", "thinking"), JSON.stringify(part.text));
        return;
      case "text-delta":
        if (!part.text) return;
        if (this.open?.kind !== "text") this.start({ kind: "text", index: this.blocks.length, text: "" });
        (this.open as Extract<Block, { kind: "text" }>).text += part.text;
        if (this.sink) this.delta(this.frameOf(this.open!, "text_delta", "text"), JSON.stringify(part.text));
        return;
      case "tool-call-delta":
        this.addToolFragment(part);
        return;
      case "native-record":
        if (this.options.upstreamSignatures) this.addUpstreamBlocks(part.record);
        return;
      default:
        return;
    }
  }

  /** Closes the last block. */
  finish(): void {
    this.close();
  }

  /**
   * Gives every ended thinking block not signed yet `signature` (the sealed
   * envelope of the turn's carriers so far; undefined when there is none to
   * give) and sends what was held, each held thinking block's
   * signature_delta before its stop.
   */
  seal(signature: string | undefined): void {
    if (signature) for (const block of this.blocks) if (block.kind === "thinking" && !block.signature && block !== this.open) block.signature = signature;
    if (!this.sink) return;
    const held = this.held ?? [];
    this.held = undefined;
    for (const entry of held) {
      if (typeof entry === "number") {
        if (signature) this.sink.event("content_block_delta", signatureDelta(entry, signature));
      } else if (entry.frame) this.sink.delta(entry.frame, entry.json);
      else this.sink.event(entry.name, entry.json);
    }
  }

  /**
   * Closes the answer with one more thinking block, without text, signed
   * `signature`: the envelope of the whole turn, whose last carriers (a
   * Gemini function call's signature, `reasoning_details`, a native record)
   * arrived after the earlier thinking blocks were signed and what followed
   * them had streamed. The client hands it back with the message, and the
   * last signature of a message is the one carrierd reads
   * (openThinkingSignatures).
   */
  appendSigned(signature: string): void {
    const block: Block = { kind: "thinking", index: this.blocks.length, thinking: "", signature };
    this.start(block);
    this.open = undefined;
    this.openFrame = undefined;
    this.event("content_block_delta", signatureDelta(block.index, signature));
    this.event("content_block_stop", `{"type":"content_block_stop","index":${block.index}}`);
  }

  /** Whether the answer has a thinking block. */
  get hasThinking(): boolean {
    return this.blocks.some((block) => block.kind === "thinking");
  }

  /** Every block as the final message lists it. */
  content(): JsonObject[] {
    return this.blocks.map((block) => blockOf(block, this.options.omitThinkingText));
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
    if (this.sink && this.open === call) this.delta(this.frameOf(call, "input_json_delta", "partial_json"), JSON.stringify(part.arguments));
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
    if (!this.sink) return;
    const opening =
      block.kind === "thinking"
        ? { type: "thinking", thinking: "", signature: "" }
        : block.kind === "redacted_thinking"
          ? { type: "redacted_thinking", data: block.data }
          : block.kind === "text"
            ? { type: "text", text: "" }
            : { type: "tool_use", id: block.id, name: block.name, input: {} };
    this.event("content_block_start", JSON.stringify({ type: "content_block_start", index: block.index, content_block: opening }));
  }

  private close(): void {
    const block = this.open;
    if (!block) return;
    this.open = undefined;
    this.openFrame = undefined;
    if (!this.sink) return;
    if (block.kind === "thinking") {
      if (this.options.upstreamSignatures) {
        if (block.signature) this.event("content_block_delta", signatureDelta(block.index, block.signature));
      } else (this.held ??= []).push(block.index); // signed once the turn is sealed
    }
    this.event("content_block_stop", `{"type":"content_block_stop","index":${block.index}}`);
  }

  private event(name: string, json: string): void {
    if (this.held) this.held.push({ name, json });
    else this.sink?.event(name, json);
  }

  private delta(frame: DataFrame, json: string): void {
    if (this.held) this.held.push({ frame, json });
    else this.sink?.delta(frame, json);
  }

  /** The constant bytes of the open block's deltas, encoded once per block. */
  private frameOf(block: Block, deltaType: string, field: string): DataFrame {
    return (this.openFrame ??= {
      before: Buffer.from(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${block.index},"delta":{"type":"${deltaType}","${field}":`),
      after: DELTA_END,
    });
  }
}

const DELTA_END = Buffer.from("}}\n\n");

type HeldEvent = { readonly name: string; readonly json: string; readonly frame?: undefined } | { readonly frame: DataFrame; readonly json: string };

function signatureDelta(index: number, signature: string): string {
  return JSON.stringify({ type: "content_block_delta", index, delta: { type: "signature_delta", signature } });
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
