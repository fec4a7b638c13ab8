import type { ServerResponse } from "node:http";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { StreamPart } from "../../providers/contract.js";
import { dataFrame, SseWriter, type DataFrame } from "../sse.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { errorChunk } from "./errors.js";
import { servedAs, type CompletionIdentity } from "./final-object.js";

const DONE = "data: [DONE]\n\n";

/**
 * The turn as `chat.completion.chunk`s, then `[DONE]`. The constant head of
 * every chunk is serialised once, and a reasoning or text delta (nearly
 * every part) is written between bytes encoded once per stream, so its only
 * new string is its text's JSON (docs/performance.md).
 */
export class ChunkStream implements TurnStreamWriter {
  private readonly sse: SseWriter;
  private readonly head: string;
  private readonly reasoningDelta: DataFrame;
  private readonly textDelta: DataFrame;
  /** Clients index tool calls from 0 in the order they appear, whatever the upstream numbered them. */
  private readonly toolIndexes = new Map<number, number>();

  constructor(
    response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
    identity: CompletionIdentity,
    private readonly includeUsage: boolean,
  ) {
    this.sse = new SseWriter(response, headers, keepaliveSeconds);
    this.head = `{"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},"model":${JSON.stringify(identity.model)}`;
    const deltaFrame = (field: string) => dataFrame(`${this.head},"choices":[{"index":0,"delta":{"${field}":`, `},"logprobs":null,"finish_reason":null}]}`);
    this.reasoningDelta = deltaFrame("reasoning_content");
    this.textDelta = deltaFrame("content");
    this.sse.data(this.chunk(`{"role":"assistant","content":""}`));
  }

  part(part: StreamPart): void {
    if (part.type === "reasoning-delta") this.sse.dataInFrame(this.reasoningDelta, JSON.stringify(part.text));
    else if (part.type === "text-delta") this.sse.dataInFrame(this.textDelta, JSON.stringify(part.text));
    else if (part.type === "tool-call-delta") this.sse.data(this.chunk(this.toolCallDelta(part)));
    // the SDKs join each chunk's logprobs.content in order, whatever its delta holds
    else if (part.type === "logprobs")
      this.sse.data(`${this.head},"choices":[{"index":0,"delta":{},"logprobs":${JSON.stringify({ content: part.content })},"finish_reason":null}]}`);
  }

  answerRead(): void {
    this.sse.holdUntilEnd(); // the last events leave with [DONE]
  }

  finish(turn: AssistantTurn): void {
    // what the upstream says of how it served the answer is known at its end: the last chunks say it (the SDKs keep a chunk's top-level fields)
    const served = JSON.stringify(servedAs(turn)).slice(1, -1);
    const head = served ? `${this.head},${served}` : this.head;
    const stopReason = turn.stopSequence === undefined ? "" : `,"stop_reason":${JSON.stringify(turn.stopSequence)}`;
    this.sse.data(`${head},"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":${JSON.stringify(turn.finishReason)}${stopReason}}]}`);
    if (this.includeUsage && turn.usage) this.sse.data(`${head},"choices":[],"usage":${JSON.stringify(turn.usage)}}`);
    this.sse.end(DONE);
  }

  fail(failure: GatewayError): void {
    this.sse.data(errorChunk(failure));
    this.sse.end(DONE);
  }

  private chunk(delta: string): string {
    return `${this.head},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]}`;
  }

  private toolCallDelta(part: Extract<StreamPart, { type: "tool-call-delta" }>): string {
    let index = this.toolIndexes.get(part.index);
    const first = index === undefined;
    if (index === undefined) this.toolIndexes.set(part.index, (index = this.toolIndexes.size));
    const fn: Record<string, string> = {};
    if (first) fn.name = part.name ?? "";
    if (part.arguments !== undefined || first) fn.arguments = part.arguments ?? "";
    const call: Record<string, unknown> = { index };
    if (first) Object.assign(call, { id: part.id ?? "", type: "function" });
    call.function = fn;
    return `{"tool_calls":[${JSON.stringify(call)}]}`;
  }
}
