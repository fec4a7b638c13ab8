import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request an emulator received, rejected ones included. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body bytes (SigV4 is computed over them). */
  readonly raw: Buffer;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly body: Record<string, unknown> | undefined;
  status: number;
}

/** What a handler answers: a JSON body, an SSE body, or raw bytes (AWS event stream). */
export type Reply =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; sse: string }
  | { status: number; bytes: Buffer; contentType: string; headers?: Record<string, string> };

export interface Emulator {
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

/** A loopback HTTP server that records every request and answers with `handle`. */
export async function startEmulator(handle: (request: Received) => Reply): Promise<Emulator> {
  const received: Received[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      const request: Received = { method: incoming.method ?? "GET", path: incoming.url ?? "/", headers: incoming.headers, raw, body, status: 0 };
      received.push(request);
      let reply: Reply;
      try {
        reply = handle(request);
      } catch (error) {
        reply = { status: 500, json: { error: String(error) } };
      }
      request.status = reply.status;
      write(response, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function write(response: ServerResponse, reply: Reply): void {
  if ("json" in reply) {
    response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    response.end(JSON.stringify(reply.json));
  } else if ("sse" in reply) {
    response.writeHead(reply.status, { "content-type": "text/event-stream; charset=utf-8" });
    response.end(reply.sse);
  } else {
    response.writeHead(reply.status, { "content-type": reply.contentType, ...reply.headers });
    response.end(reply.bytes);
  }
}

/**
 * Serves a go-vcr cassette: the Nth request gets the Nth recorded response,
 * so a test can compare what carrierd sent with what the real client sent.
 * `check` may refuse a request first (a signature that does not verify).
 */
export async function startCassetteEmulator(
  interactions: { response: { status: number; body: string; contentType: string }; responseBytes?: Uint8Array }[],
  check?: (request: Received) => Reply | undefined,
): Promise<Emulator> {
  let next = 0;
  return startEmulator((request) => {
    const refused = check?.(request);
    if (refused) return refused;
    const interaction = interactions[next++];
    if (!interaction) return { status: 500, json: { error: "cassette exhausted" } };
    const { status, body, contentType } = interaction.response;
    if (interaction.responseBytes) return { status, bytes: Buffer.from(interaction.responseBytes), contentType };
    if (contentType.includes("event-stream")) return { status, sse: body };
    return { status, json: JSON.parse(body) as unknown };
  });
}
