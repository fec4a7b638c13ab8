import type { ServerResponse } from "node:http";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { StreamPart } from "../../providers/contract.js";
import { SseWriter } from "../sse.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { googleErrorBody } from "./errors.js";
import { finishReasonOf, responseObject, usageMetadata, type ResponseIdentity } from "./final-object.js";
import { ResponseParts } from "./response-parts.js";

/**
 * The turn as Gemini's `streamGenerateContent?alt=sse`: one
 * GenerateContentResponse per network read of the upstream holding its new
 * thought and text parts, then, once the turn is stored, the last one: the
 * function calls (the first signed with the turn's envelope), finishReason
 * and usageMetadata.
 */
export class GeminiStream implements TurnStreamWriter {
  private readonly sse: SseWriter;
  private readonly parts: ResponseParts;

  constructor(
    response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
    private readonly identity: ResponseIdentity,
    includeThoughts: boolean,
    /** The turn's thoughtSignature once it is stored; undefined when it cannot be sealed. */
    private readonly signature: () => Promise<string | undefined>,
  ) {
    this.sse = new SseWriter(response, headers, keepaliveSeconds);
    this.parts = new ResponseParts(includeThoughts);
  }

  part(part: StreamPart): void {
    this.parts.add(part);
  }

  batchDone(): void {
    const fresh = this.parts.takeFresh();
    if (fresh.length > 0) this.sse.data(JSON.stringify(responseObject(this.identity, fresh)));
  }

  answerRead(): void {
    this.batchDone();
    this.sse.holdUntilEnd(); // the last chunk leaves with the end
  }

  async finish(turn: AssistantTurn): Promise<void> {
    const closing = this.parts.closing(this.parts.hasCalls ? await this.signature() : undefined);
    const last = responseObject(this.identity, closing, { reason: finishReasonOf(turn.finishReason), usage: usageMetadata(turn.usage) });
    this.sse.data(JSON.stringify(last));
    this.sse.end();
  }

  fail(failure: GatewayError): void {
    this.sse.data(JSON.stringify(googleErrorBody(failure)));
    this.sse.end();
  }
}
