import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat message as the emulator received it. */
export type GatedMessage = Record<string, unknown> & { role: string };

/**
 * An OpenAI-compatible upstream that streams slowly, in the order a route
 * with late carriers does (OpenRouter, whose `reasoning_details` come with
 * the last chunks): its reasoning and its text first, then it waits on a
 * gate the test opens, and only then sends the turn's `reasoning_details`
 * (one `reasoning.encrypted` item, as OpenRouter streams Gemini's thought
 * signature), the finish and the usage. A gateway that held the text back
 * until the upstream finished would never show it before the gate opens.
 */
export interface GatedUpstream {
  readonly baseUrl: string;
  /** Every request body received, in order. */
  readonly received: { messages: GatedMessage[]; stream?: boolean }[];
  /** Resolves once the answer being streamed has reached its gate. */
  atGate(): Promise<void>;
  /** Lets the answer being streamed finish. */
  open(): void;
  /** The reasoning_details the nth answer (from 1) sent after its gate. */
  lateDetails(n: number): Record<string, unknown>[];
  close(): Promise<void>;
}

/** A promise and the function that resolves it (Promise.withResolvers, which Node 20 lacks). */
function resolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

export async function startGatedUpstream(): Promise<GatedUpstream> {
  const received: { messages: GatedMessage[]; stream?: boolean }[] = [];
  let gate = resolvers();
  let reached = resolvers();
  const chunk = (response: ServerResponse, n: number, delta: object, finish: string | null = null, extra: object = {}) =>
    response.write(
      `data: ${JSON.stringify({ id: `gen-${n}`, object: "chat.completion.chunk", created: 1, model: "google/gemini-3-pro", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
    );
  const lateDetails = (n: number) => [{ type: "reasoning.encrypted", data: `late-signature-${n}`, format: "google-gemini-v1", index: 0 }];
  const server: Server = createServer((request, response) => {
    let raw = "";
    request.on("data", (part: Buffer) => (raw += part.toString("utf8")));
    request.on("end", () => {
      void (async () => {
        const body = JSON.parse(raw) as { stream?: boolean; messages: GatedMessage[] };
        received.push(body);
        const n = received.length;
        response.writeHead(200, { "content-type": "text/event-stream" });
        chunk(response, n, { role: "assistant", content: "" });
        for (const piece of [`Thinking ${n},`, " step by step."]) chunk(response, n, { reasoning_content: piece });
        for (const piece of [`Answer ${n}`, " is here."]) chunk(response, n, { content: piece });
        reached.resolve();
        await gate.promise;
        gate = resolvers();
        reached = resolvers();
        chunk(response, n, { reasoning_details: lateDetails(n) });
        chunk(response, n, {}, "stop", { usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 } });
        response.end("data: [DONE]\n\n");
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    atGate: () => reached.promise,
    open: () => gate.resolve(),
    lateDetails,
    close: () =>
      new Promise<void>((resolve) => {
        gate.resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
