import type { ServerResponse } from "node:http";
import type { ChatMessage, ChatRequest, JsonObject, StreamPart } from "../../providers/contract.js";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { TurnRun } from "../../turn/chat-service.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import { isJsonObject, readArray, readString } from "../../providers/json-readers.js";
import { CarriedStream } from "../carried/carried-answer.js";
import type { FailureFrame } from "../first-byte-wait.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { convertInput } from "./convert-input.js";

/**
 * What the turn reads of a Responses request carried to a Responses route
 * (docs/architecture.md#two-paths): its instructions and the input items the
 * turn pipeline knows, from which the session is found, replay decides and
 * the prompt is stored. Nothing is refused here — the upstream judges the
 * request — and an item the view cannot read is left out of the view only.
 * `assistantItems` says where each assistant message of the view came from
 * in `input`: the carried body's replay splices find a turn's items by it.
 */
export interface CarriedView {
  readonly request: ChatRequest;
  /** The input's messages, as a stored Response keeps them. */
  readonly input: ChatMessage[];
  readonly assistantItems: number[][];
  /** carrierd's envelopes the input's reasoning items carried, by the message they belong to. */
  readonly envelopes: Map<ChatMessage, string>;
}

export function carriedView(body: JsonObject, model: string, stream: boolean): CarriedView {
  const positions = new Map<ChatMessage, number[]>();
  const envelopes = new Map<ChatMessage, string>();
  const sent = typeof body.input === "string" || Array.isArray(body.input) ? body.input : [];
  // an item_reference is the upstream's to resolve: the view leaves it out
  const input = convertInput(sent, () => undefined, undefined, envelopes, undefined, positions);
  const messages: ChatMessage[] = typeof body.instructions === "string" && body.instructions ? [{ role: "system", content: body.instructions }] : [];
  messages.push(...input);
  const assistantItems = input.filter((message) => message.role === "assistant").map((message) => positions.get(message) ?? []);
  return { request: { model, messages, stream }, input, assistantItems, envelopes };
}

/** Keeps what the door keeps of a carried answer: the upstream's Response object, once the turn is stored. */
export type ResponseKeeper = (response: JsonObject, turn: AssistantTurn) => Promise<void>;

/**
 * A carried Responses stream: the upstream's bytes to the client as they
 * were read (CarriedStream), and, when the request asked for its Response
 * to be kept (`store` not false), the bytes read again at the end for the
 * final Response, stored before `response.completed` reaches the client.
 */
export class CarriedResponseStream implements TurnStreamWriter {
  private readonly inner: CarriedStream;
  private readonly read: Buffer[] | undefined;

  constructor(
    response: ServerResponse,
    run: TurnRun,
    extraHeaders: Readonly<Record<string, string>>,
    failureFrame: FailureFrame,
    private readonly keeper: ResponseKeeper | undefined,
  ) {
    this.inner = new CarriedStream(response, run, extraHeaders, failureFrame);
    this.read = keeper ? [] : undefined;
  }

  part(part: StreamPart): void {
    if (this.read && part.type === "answer-bytes") this.read.push(part.bytes);
    this.inner.part(part);
  }

  batchDone(): void {
    this.inner.batchDone();
  }

  answerRead(): void {
    this.inner.answerRead();
  }

  async finish(turn: AssistantTurn): Promise<void> {
    const final = this.read ? finalResponse(Buffer.concat(this.read), true) : undefined;
    if (final) await this.keeper!(final, turn);
    this.inner.finish();
  }

  fail(failure: GatewayError, cause?: unknown): void {
    this.inner.fail(failure, cause);
  }
}

/** The events whose `response` is the whole final Response. */
const FINAL_EVENTS = new Set(["response.completed", "response.incomplete"]);

/**
 * The final Response in a carried answer's bytes: the object itself for an
 * answer sent whole, the `response` of the stream's last
 * `response.completed` (or `.incomplete`) event for a stream; undefined
 * when there is none with an id.
 */
export function finalResponse(bytes: Buffer, streamed: boolean): JsonObject | undefined {
  const text = bytes.toString("utf8");
  if (!streamed) return withId(parsed(text));
  const lines = text.split(/\r?\n/);
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index];
    if (!line.startsWith("data:")) continue;
    const event = parsed(line.slice(5));
    if (event && typeof event.type === "string" && FINAL_EVENTS.has(event.type)) return withId(isJsonObject(event.response) ? event.response : undefined);
  }
  return undefined;
}

/** The output items of a Response, as the store keeps them for `item_reference`. */
export function outputItems(response: JsonObject): JsonObject[] {
  return (readArray(response.output) ?? []).filter(isJsonObject);
}

function parsed(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function withId(response: JsonObject | undefined): JsonObject | undefined {
  return response && readString(response.id) !== undefined ? response : undefined;
}
