import type { IncomingMessage, ServerResponse } from "node:http";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import { UpstreamReportedError, type CarriedRequest, type StreamPart } from "../../providers/contract.js";
import { redactText } from "../../foundation/logging/redact.js";
import { noteError } from "../../foundation/logging/access-log.js";
import type { TurnRun } from "../../turn/chat-service.js";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { FailureFrame } from "../first-byte-wait.js";
import type { TurnStreamWriter } from "../relay-turn.js";
import { readTurn } from "../relay-turn.js";

/**
 * The carried path's door side (docs/architecture.md#two-paths): the
 * client's request handed to the turn as it sent it, and the upstream's
 * answer handed back as the upstream sent it — its status, its headers of
 * note, its bytes frame by frame — while the turn reads the same bytes to
 * store the turn and publish its events.
 */

/** The client's request for the turn: its bytes, and its headers of the provider's family (`prefix`: `anthropic-`, `openai-`), as sent. */
export function carriedRequest(request: IncomingMessage, bytes: Buffer, prefix: string): CarriedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!name.startsWith(prefix) || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return { bytes, headers };
}

/**
 * A stream carried through: every network read of the upstream's answer
 * written to the client as it was read. The read that holds the answer's
 * end (a `finish` part was decoded from it) and any after it are held until
 * the turn is stored: a client is never told a turn completed that was not.
 */
export class CarriedStream implements TurnStreamWriter {
  private readonly read: Buffer[] = [];
  private held: Buffer[] | undefined;

  constructor(
    private readonly response: ServerResponse,
    private readonly run: TurnRun,
    private readonly extraHeaders: Readonly<Record<string, string>>,
    private readonly failureFrame: FailureFrame,
  ) {}

  part(part: StreamPart): void {
    if (part.type === "answer-bytes") this.read.push(part.bytes);
    else if (part.type === "finish") this.held ??= [];
  }

  batchDone(): void {
    if (this.read.length === 0) return;
    if (this.held) this.held.push(...this.read);
    else {
      this.open();
      for (const bytes of this.read) this.response.write(bytes);
    }
    this.read.length = 0;
  }

  answerRead(): void {
    this.batchDone();
  }

  finish(): void {
    this.open();
    for (const bytes of this.held ?? []) this.response.write(bytes);
    this.response.end();
  }

  fail(failure: GatewayError, cause?: unknown): void {
    if (this.response.writableEnded) return;
    this.batchDone();
    this.open();
    // an error the upstream reported in its stream is in its own bytes, with what came before it
    if (cause instanceof UpstreamReportedError) {
      for (const bytes of this.held ?? []) this.response.write(bytes);
      this.response.end();
    } else this.response.end(this.failureFrame(failure));
  }

  /** The upstream's status and headers, once; a stream opened early for keepalives has sent its own. */
  private open(): void {
    if (this.response.headersSent) return;
    const head = this.run.head;
    this.response.writeHead(head?.status ?? 200, { ...head?.headers, "cache-control": "no-cache", ...this.extraHeaders });
  }
}

/**
 * An answer sent whole, carried: the upstream's status, headers and body
 * bytes, once the turn is stored — and once `stored` has kept what the door
 * keeps of the answer itself (the Responses door: the Response, retrievable).
 */
export async function sendCarriedWhole(
  run: TurnRun,
  response: ServerResponse,
  extraHeaders: Readonly<Record<string, string>>,
  stored?: (body: Buffer, turn: AssistantTurn) => Promise<void>,
): Promise<void> {
  const chunks: Buffer[] = [];
  await readTurn(run, (part) => {
    if (part.type === "answer-bytes") chunks.push(part.bytes);
  });
  const turn = await run.complete();
  const body = Buffer.concat(chunks);
  if (stored) await stored(body, turn);
  response.writeHead(run.head?.status ?? 200, { ...run.head?.headers, "content-length": body.length, ...extraHeaders });
  response.end(body);
}

/**
 * A carried request the upstream refused: its status, headers and body as
 * the upstream sent them (a credential an upstream echoes is masked, as in
 * every log line); a stream opened early for keepalives gets the body as its
 * `error` event. Any other failure is the door's own error. True when the
 * refusal was written here.
 */
export function sendCarriedRefusal(
  response: ServerResponse,
  error: unknown,
  failureFrame: FailureFrame,
  extraHeaders: Readonly<Record<string, string>> = {},
): boolean {
  if (!(error instanceof GatewayError) || error.upstreamBody === undefined || response.writableEnded) return false;
  noteError(response, error);
  const body = Buffer.from(redactText(error.upstreamBody), "utf8");
  if (response.headersSent) {
    response.end(failureFrame(error));
    return true;
  }
  response.writeHead(error.status, { ...error.headers, "content-length": body.length, ...extraHeaders });
  response.end(body);
  return true;
}

/**
 * The stream's error event holding the upstream's own error body (each of
 * its lines a `data:` line), as a provider streams an error: `event: error`
 * (Anthropic's, the Responses API's), or an unnamed `data:` event (`named`
 * false: Google's); any other failure is the door's own frame. It opens with
 * a blank line: the upstream's bytes before it may end mid-line (an upstream
 * cut off by a deadline), and the event must not join that line.
 */
export function carriedErrorFrame(fallback: FailureFrame, named = true): FailureFrame {
  const event = named ? "event: error\n" : "";
  return (failure) =>
    failure.upstreamBody !== undefined ? `\n\n${event}data: ${redactText(failure.upstreamBody).replace(/\r?\n/g, "\ndata: ")}\n\n` : `\n\n${fallback(failure)}`;
}
