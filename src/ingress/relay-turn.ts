import type { ServerResponse } from "node:http";
import type { AssistantTurn } from "../routing/carriers/turn-accumulator.js";
import type { TurnRun } from "../turn/chat-service.js";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import type { StreamPart } from "../providers/contract.js";
import { noteError } from "../foundation/logging/access-log.js";
import type { Logger } from "../foundation/logging/logger.js";
import { asUpstreamFailure } from "./start-turn.js";

/** How one wire API writes a turn as its stream (each adapter's `stream.ts`). */
export interface TurnStreamWriter {
  /** One part of the answer, as it arrives. */
  part(part: StreamPart): void;
  /** After each batch of parts, the parts of one network read. */
  batchDone?(): void;
  /**
   * The upstream's answer is read through: what is still due before the
   * turn is stored is done here, and the stream's last events are held to
   * leave together with the final one.
   */
  answerRead(): Promise<void> | void;
  /** The turn is stored: the stream's last events, and its end. */
  finish(turn: AssistantTurn): Promise<void> | void;
  /** The turn failed, upstream or while it was stored: the stream's error event(s), and its end. `cause`: what was thrown. */
  fail(failure: GatewayError, cause?: unknown): void;
}

/**
 * The one stream loop every wire API runs: each part of the turn goes to the
 * writer as it arrives, the turn is stored, and only then does the writer
 * say the turn is done — a client is never told a turn completed that was
 * not stored. A failure ends the stream with the API's error event: the
 * upstream's as the upstream failure it is; one after the answer was read
 * (the store did not answer) as itself, or as an internal error, logged.
 */
export async function streamTurn(run: TurnRun, response: ServerResponse, writer: TurnStreamWriter, log: Logger): Promise<void> {
  let answerRead = false;
  try {
    for await (const batch of run.batches) {
      for (const part of batch) writer.part(part);
      writer.batchDone?.();
    }
    await writer.answerRead();
    answerRead = true;
    await writer.finish(await run.complete()); // complete() stores the turn
  } catch (error) {
    run.fail(error);
    if (answerRead) log.error({ err: error, turn_id: run.turnId }, "a streamed turn could not be completed");
    const failure = !answerRead
      ? asUpstreamFailure(error)
      : error instanceof GatewayError
        ? error
        : new GatewayError("internal_error", "the turn could not be stored");
    noteError(response, failure);
    writer.fail(failure, error);
  }
}

/**
 * The loop of an answer sent whole: every part of the turn to `add`. A
 * failure is thrown as the upstream failure it is, before anything was
 * sent; the caller stores the turn (`run.complete()`) and answers.
 */
export async function readTurn(run: TurnRun, add: (part: StreamPart) => void): Promise<void> {
  try {
    for await (const batch of run.batches) for (const part of batch) add(part);
  } catch (error) {
    run.fail(error);
    throw asUpstreamFailure(error);
  }
}
