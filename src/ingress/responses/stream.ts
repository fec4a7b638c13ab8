import type { ServerResponse } from "node:http";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { JsonObject, StreamPart } from "../../providers/contract.js";
import { SseWriter } from "../sse.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { errorEventFields } from "./errors.js";
import type { ResponseOutcome } from "./final-object.js";
import type { ResponseBody } from "./response-body.js";
import type { NamespacedNames } from "./namespaced-names.js";
import { OutputBuilder, type OutputSink } from "./output-builder.js";
import { SealingSink, wantsEncryptedContent } from "./sealed-reasoning.js";
import { newId } from "../../turn/sessions/session-id.js";

/** What becomes of a turn's output items once the turn is stored: sealed (when asked for), then the Response built and stored. */
export interface ResponseFinisher {
  /** The envelope of the turn's carriers, when the request asked for encrypted_content and the output can carry it. */
  seal(items: readonly JsonObject[]): Promise<string | undefined>;
  /** The envelope of the turn's reasoning so far, while it streams; undefined when it cannot be sealed. */
  sealSoFar(reasoningText: string): Promise<string | undefined>;
  /** Once the turn is stored: the envelope of the whole turn when carriers arrived after its reasoning items were sealed; undefined when none did. */
  lateSeal(items: readonly JsonObject[]): Promise<string | undefined>;
  /** Stores the final Response; what it was stored with, which the last event shows. */
  store(turn: AssistantTurn, items: JsonObject[]): Promise<ResponseOutcome>;
}

/**
 * Responses streaming events as OpenAI sends them: `event: <type>` plus a
 * `data:` line, every event numbered by a strictly increasing
 * `sequence_number` from 0. Event types are our own constants, so nothing a
 * client or upstream sends reaches the framing.
 */
export class ResponseEventWriter implements OutputSink {
  private sequence = 0;

  constructor(private readonly sse: SseWriter) {}

  emit(type: string, fields: JsonObject): void {
    this.sse.data(JSON.stringify({ type, sequence_number: this.sequence++, ...fields }), type);
  }

  /** An event whose one field is `response`, given as its JSON text (ResponseBody.json). */
  emitResponse(type: string, responseJson: string): void {
    this.sse.data(`{"type":"${type}","sequence_number":${this.sequence++},"response":${responseJson}}`, type);
  }

  emitDelta(type: string, head: string, delta: string): void {
    this.sse.data(`{"type":"${type}","sequence_number":${this.sequence++},${head},"delta":${JSON.stringify(delta)}}`, type);
  }

  holdUntilEnd(): void {
    this.sse.holdUntilEnd();
  }

  end(): void {
    this.sse.end();
  }
}

/**
 * The turn as the Responses stream (docs/api.md#streaming): created, then
 * in_progress, then the items as they grow, and `response.completed` once
 * the response is stored.
 */
export class ResponseStream implements TurnStreamWriter {
  private readonly events: ResponseEventWriter;
  /** Holds what follows a reasoning item until its envelope is sealed, when the request asked for encrypted_content. */
  private readonly sealing: SealingSink | undefined;
  private readonly builder: OutputBuilder;
  private items: JsonObject[] = [];
  /** The seal of the reasoning so far, while it runs. */
  private sealingNow: Promise<void> | undefined;

  constructor(
    response: ServerResponse,
    headers: Record<string, string>,
    keepaliveSeconds: number,
    private readonly body: ResponseBody,
    names: NamespacedNames,
    private readonly finisher: ResponseFinisher,
  ) {
    this.events = new ResponseEventWriter(new SseWriter(response, headers, keepaliveSeconds));
    // the same object twice: serialised once
    const opening = body.json({ status: "in_progress", output: [] });
    this.events.emitResponse("response.created", opening);
    this.events.emitResponse("response.in_progress", opening);
    this.sealing = wantsEncryptedContent(body.identity.request) ? new SealingSink(this.events) : undefined;
    this.builder = new OutputBuilder(this.sealing ?? this.events, names);
  }

  part(part: StreamPart): void {
    this.builder.add(part);
  }

  /**
   * A reasoning item that has ended is sealed with the reasoning so far, and
   * what follows it streams once the seal is done; the answer is read on
   * meanwhile.
   */
  batchDone(): void {
    const sealing = this.sealing;
    if (!sealing?.holding || this.sealingNow) return;
    this.sealingNow = this.finisher.sealSoFar(this.builder.reasoningSoFar).then((envelope) => {
      this.sealingNow = undefined;
      sealing.release(envelope);
    });
  }

  async answerRead(): Promise<void> {
    if (this.sealingNow) await this.sealingNow;
    this.events.holdUntilEnd(); // the last events leave with response.completed
    this.items = this.builder.finish();
  }

  async finish(turn: AssistantTurn): Promise<void> {
    if (this.sealing) await this.sealItems(this.sealing);
    const outcome = await this.finisher.store(turn, this.items);
    this.events.emitResponse(outcome.status === "incomplete" ? "response.incomplete" : "response.completed", this.body.json(outcome));
    this.events.end();
  }

  /**
   * The envelopes of the turn's reasoning items, once it is stored: a
   * reasoning item that ended with the answer gets the whole turn's; when
   * every one was sealed as it ended and carriers arrived after, one more
   * reasoning item, without text, carries the whole turn's envelope after
   * the output (convert-input folds it back into its turn). The final
   * Response lists the items as they streamed.
   */
  private async sealItems(sealing: SealingSink): Promise<void> {
    if (sealing.holding) sealing.release(await this.finisher.seal(this.items));
    else {
      const late = await this.finisher.lateSeal(this.items);
      if (late) {
        const id = newId("rs_");
        const output_index = this.items.length;
        this.events.emit("response.output_item.added", { output_index, item: { id, type: "reasoning", summary: [] } });
        const item = { id, type: "reasoning", status: "completed", summary: [], encrypted_content: late };
        this.events.emit("response.output_item.done", { output_index, item });
        this.items.push(item);
      }
    }
    for (const item of this.items) {
      const envelope = item.type === "reasoning" && typeof item.id === "string" ? sealing.sealedItems.get(item.id) : undefined;
      if (envelope) item.encrypted_content = envelope;
    }
  }

  fail(failure: GatewayError): void {
    this.sealing?.release(undefined);
    this.events.emit("error", errorEventFields(failure));
    // the upstream's own code when it was passed on (docs/api.md#upstream-errors)
    const error = { code: failure.upstream?.code ?? failure.code, message: failure.message };
    this.events.emitResponse("response.failed", this.body.json({ status: "failed", output: this.builder.partialItems, error }));
    this.events.end();
  }
}
