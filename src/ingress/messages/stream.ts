import type { ServerResponse } from "node:http";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { SealedCarriers } from "../../routing/carriers/envelope.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { StreamPart } from "../../providers/contract.js";
import { SseWriter } from "../sse.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { errorEvent } from "./errors.js";
import { anthropicUsage, messageObject, stopReasonOf, type MessageIdentity } from "./final-object.js";
import { MessageBlocks, type BlockSink } from "./message-blocks.js";

/** Anthropic's keepalive while a stream waits: a `ping` event, which its SDKs skip. */
export const PING = Buffer.from('event: ping\ndata: {"type":"ping"}\n\n');
const MESSAGE_STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

/** Who produced a turn's carriers, as its envelope names them. */
export type SealedProducer = Pick<SealedCarriers, "plugin" | "provider" | "upstreamModel">;

/** How the turn's blocks are shown: whose signatures the thinking blocks carry, whether their text is left out, whether they are sealed as they end. */
export interface BlockView {
  readonly upstreamSignatures: boolean;
  readonly omitThinkingText: boolean;
  /** Who produced the turn's carriers, on a route whose thinking blocks carrierd signs (any but Anthropic's). */
  readonly sealedAs?: SealedProducer;
}

/** The thinking blocks' signatures: the envelope of the reasoning so far, and of the stored turn. */
export interface BlockSigner {
  /** Undefined (blocks unsigned) when it cannot be sealed. */
  sealSoFar(blocks: MessageBlocks, producer: SealedProducer): Promise<string | undefined>;
  /** Once the turn is stored; undefined when no block waits for it or it cannot be sealed. */
  signatureOf(blocks: MessageBlocks): Promise<string | undefined>;
  /**
   * Once the turn is stored, when every thinking block was signed as it
   * ended: the envelope of the whole turn if carriers arrived after those
   * signatures (undefined when none did, or it cannot be sealed).
   */
  lateSignature(blocks: MessageBlocks): Promise<string | undefined>;
}

/**
 * The turn as Anthropic's event stream: message_start, each block's start,
 * deltas and stop, then message_delta (stop_reason, usage) and
 * message_stop. The turn is stored before message_delta goes out.
 */
export class MessageStream implements TurnStreamWriter {
  private readonly sse: SseWriter;
  readonly blocks: MessageBlocks;
  /** The seal of the reasoning so far, while it runs. */
  private sealing: Promise<void> | undefined;

  constructor(
    response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
    identity: MessageIdentity,
    private readonly view: BlockView,
    private readonly signer: BlockSigner,
  ) {
    this.sse = new SseWriter(response, headers, keepaliveSeconds, PING);
    const start = messageObject(identity, [], undefined, { input_tokens: 0, output_tokens: 0 });
    this.sse.data(JSON.stringify({ type: "message_start", message: start }), "message_start");
    const sink: BlockSink = { event: (name, json) => this.sse.data(json, name), delta: (frame, json) => this.sse.dataInFrame(frame, json) };
    this.blocks = new MessageBlocks(view, sink);
  }

  part(part: StreamPart): void {
    this.blocks.add(part);
  }

  /**
   * Every thinking block is signed as it ends (the envelope of the reasoning
   * so far), and the rest streams live once the seal is done, a moment
   * later; the answer is read on meanwhile, so an upstream that has sent it
   * all is not waited on. Carriers that arrive later go in a last thinking
   * block (finish).
   */
  batchDone(): void {
    const producer = this.view.sealedAs;
    if (!producer || !this.blocks.holding || this.sealing) return;
    this.sealing = this.signer.sealSoFar(this.blocks, producer).then((signature) => {
      this.sealing = undefined;
      this.blocks.seal(signature);
    });
  }

  async answerRead(): Promise<void> {
    if (this.sealing) await this.sealing;
    this.sse.holdUntilEnd(); // the last events leave with message_stop
    this.blocks.finish();
  }

  async finish(turn: AssistantTurn): Promise<void> {
    if (this.blocks.awaitsSignature) this.blocks.seal(await this.signer.signatureOf(this.blocks));
    else if (this.view.sealedAs) {
      // carriers that came after the thinking was signed ride in one more thinking block, after what streamed live
      const late = await this.signer.lateSignature(this.blocks);
      if (late) this.blocks.appendSigned(late);
    }
    const delta = { type: "message_delta", delta: stopReasonOf(turn.finishReason, turn.stopSequence), usage: anthropicUsage(turn.usage) };
    this.sse.data(JSON.stringify(delta), "message_delta");
    this.sse.end(MESSAGE_STOP);
  }

  fail(failure: GatewayError): void {
    this.blocks.seal(undefined); // what was held goes out, unsigned, before the error
    this.sse.end(errorEvent(failure));
  }
}
