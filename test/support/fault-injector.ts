import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fault injector, not a provider: a loopback upstream whose only job is to
 * break the transport in the ways any provider's can (a body cut short, a
 * chunk that is not JSON, silence, a trickle, a flood, a 429), so the tests
 * of carrierd's own deadlines, back-pressure and stream ends need no
 * family's rules. It speaks OpenAI chat-completions framing because every
 * family emulator's stream ends the same way on a broken socket; what a
 * provider refuses and with which text is the family emulators' job
 * (test/support/openai-upstream.ts and the others). The model name picks the fault:
 *
 * - `ok`: a whole stream (reasoning, text, finish_reason, [DONE]);
 * - `cut`: reasoning then half an answer, then a clean end of the body with no finish_reason and no [DONE];
 * - `corrupt`: a chunk that is not JSON between two good ones, then a proper end;
 * - `stall`: accepts the request and never answers;
 * - `stall-after-head`: sends the head and one chunk, then nothing;
 * - `trickle`: a byte of an SSE comment every 20 ms, forever;
 * - `rate-limit`: 429 with Retry-After and x-ratelimit-* headers;
 * - `bom`: "Hello world", its body led by a UTF-8 byte order mark (some .NET
 *   and Windows-hosted servers send one); streamed, the mark's first two
 *   bytes come alone, as a network read may deliver them;
 * - `flood`: reasoning chunks as fast as the socket takes them, until it
 *   stops taking them (`write()` false and no `drain`) or the exchange closes.
 *
 * It records what each exchange did, so tests can tell that the gateway
 * stopped reading (the upstream's socket write blocked) or hung up.
 */
export interface FaultInjector {
  baseUrl(): string;
  /** Exchanges in arrival order. */
  readonly exchanges: Exchange[];
  /** The next exchange of `model`, once it arrives. */
  next(model: string): Promise<Exchange>;
  close(): Promise<void>;
}

export interface Exchange {
  readonly model: string;
  readonly body: { messages: Record<string, unknown>[]; [key: string]: unknown };
  /** Resolves when the gateway closed the connection (or the response ended). */
  readonly closed: Promise<void>;
  /** flood: bytes written so far. */
  bytesWritten: number;
  /** flood: resolves when a write was refused and the socket stayed full for a second (the gateway stopped reading). */
  readonly blocked: Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-f", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

const SSE = { "content-type": "text/event-stream" };
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** OpenAI's text for a request-rate limit (its requests-per-minute wording; the tokens-per-minute one is in openai-responses-upstream.ts). */
export const RATE_LIMITED =
  "Rate limit reached for rate-limit in organization org-emulator on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 7s. Visit https://platform.openai.com/account/rate-limits to learn more.";

export async function startFaultInjector(): Promise<FaultInjector> {
  const exchanges: Exchange[] = [];
  const waiters = new Map<string, ((exchange: Exchange) => void)[]>();
  const server: Server = createServer((request, response) => {
    let raw = "";
    request.on("data", (data: Buffer) => (raw += data));
    request.on("end", () => {
      const body = JSON.parse(raw) as Exchange["body"] & { model: string };
      let markBlocked = () => {};
      const exchange: Exchange = {
        model: body.model,
        body,
        closed: once(response, "close").then(() => undefined),
        bytesWritten: 0,
        blocked: new Promise<void>((resolve) => (markBlocked = resolve)),
      };
      exchanges.push(exchange);
      waiters.get(body.model)?.shift()?.(exchange);
      answer(body.model, request, response, exchange, markBlocked);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: () => `http://127.0.0.1:${port}/v1`,
    exchanges,
    next: (model) => new Promise((resolve) => waiters.set(model, [...(waiters.get(model) ?? []), resolve])),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(model: string, _request: IncomingMessage, response: ServerResponse, exchange: Exchange, markBlocked: () => void): void {
  switch (model) {
    case "ok":
      response.writeHead(200, SSE);
      response.end(chunk({ role: "assistant", reasoning_content: "Two and two." }) + chunk({ content: "Four." }) + chunk({}, "stop") + "data: [DONE]\n\n");
      return;
    case "cut":
      response.writeHead(200, SSE);
      response.end(chunk({ role: "assistant", reasoning_content: "First I add the" }) + chunk({ content: "The answer i" }));
      return;
    case "corrupt":
      response.writeHead(200, SSE);
      response.end(
        chunk({ role: "assistant", content: "Before. " }) +
          "data: {not json at all\n\n" +
          chunk({ content: "After." }) +
          chunk({}, "stop") +
          "data: [DONE]\n\n",
      );
      return;
    case "stall":
      return; // never a byte
    case "stall-after-head":
      response.writeHead(200, SSE);
      response.write(chunk({ role: "assistant", content: "Hello" }));
      return;
    case "trickle": {
      response.writeHead(200, SSE);
      const timer = setInterval(() => response.write(":"), 20);
      response.on("close", () => clearInterval(timer));
      return;
    }
    case "bom":
      if (exchange.body.stream) {
        response.writeHead(200, SSE);
        response.write(BOM.subarray(0, 2));
        setTimeout(() => {
          response.write(Buffer.concat([BOM.subarray(2), Buffer.from(chunk({ role: "assistant", content: "Hello" }))]));
          response.end(chunk({ content: " world" }, "stop") + "data: [DONE]\n\n");
        }, 20);
        return;
      }
      response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      response.end(
        Buffer.concat([
          BOM,
          Buffer.from(
            JSON.stringify({
              id: "chatcmpl-f",
              object: "chat.completion",
              created: 1,
              model: "m",
              choices: [{ index: 0, message: { role: "assistant", content: "Hello world" }, finish_reason: "stop" }],
            }),
          ),
        ]),
      );
      return;
    case "rate-limit":
      response.writeHead(429, {
        "content-type": "application/json",
        "retry-after": "7",
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "7s",
        "x-unrelated": "not passed on",
      });
      response.end(JSON.stringify({ error: { message: RATE_LIMITED, type: "requests", param: null, code: "rate_limit_exceeded" } }));
      return;
    case "flood": {
      response.writeHead(200, SSE);
      const piece = chunk({ reasoning_content: "x".repeat(4000) });
      const pump = () => {
        while (!response.destroyed) {
          exchange.bytesWritten += piece.length;
          if (!response.write(piece)) {
            // refused: the socket is full; if it does not drain soon, the reader upstream of us has stopped
            const stuck = setTimeout(markBlocked, 1_000);
            response.once("drain", () => {
              clearTimeout(stuck);
              pump();
            });
            return;
          }
        }
      };
      pump();
      return;
    }
    default:
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `no such model ${model}` } }));
  }
}
