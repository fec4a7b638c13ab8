import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Message } from "./stateless-client.js";

/**
 * An OpenAI-compatible upstream whose answers, while held, wait until the
 * test lets them finish (a stream after its first chunk); `arrived(n)`
 * resolves once n requests in all have reached it.
 */
export function heldUpstream(): Promise<{
  url: string;
  hold(): void;
  release(): void;
  arrived(count: number): Promise<void>;
  count(): number;
  /** Every request body received, in order. */
  received: { messages: Message[] }[];
  close(): Promise<void>;
}> {
  let held: Promise<void> | undefined;
  let releaseHeld: (() => void) | undefined;
  let n = 0;
  const received: { messages: Message[] }[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const chunk = (response: ServerResponse, delta: object, finish: string | null = null) =>
    response.write(
      `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  const server: Server = createServer((request, response) => {
    let raw = "";
    request.on("data", (part: Buffer) => (raw += part.toString("utf8")));
    request.on("end", async () => {
      const body = JSON.parse(raw) as { stream?: boolean; messages: Message[] };
      n++;
      received.push(body);
      for (const waiter of waiting.filter((entry) => entry.count <= n)) waiter.resolve();
      const reasoning = `Thinking ${n} about ${String(body.messages.at(-1)?.content)}.`;
      const content = `Answer ${n}.`;
      if (!body.stream) {
        if (held) await held;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            id: `chatcmpl-${n}`,
            object: "chat.completion",
            created: 1,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content, reasoning_content: reasoning }, finish_reason: "stop" }],
          }),
        );
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      chunk(response, { role: "assistant", reasoning_content: reasoning });
      if (held) await held;
      chunk(response, { content });
      chunk(response, {}, "stop");
      response.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        hold: () => (held = new Promise<void>((release) => (releaseHeld = release))),
        count: () => n,
        received,
        arrived: (count) => (n >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve }))),
        release: () => {
          held = undefined;
          releaseHeld?.();
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}
