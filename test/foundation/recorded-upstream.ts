import { EventEmitter } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { FIXTURES_DIR, readFixture } from "../support/fixtures-dir.js";

/** Recorded provider traffic (vercel/ai `__fixtures__`), in the repository. */
export const CHUNKS_DIR = join(FIXTURES_DIR, "chunks");

/** A recorded exchange: `<name>.chunks.txt` (one JSON payload per line) for streams, `<name>.json` for whole bodies. */
export interface Recording {
  /** Path under fixtures/chunks without extension, e.g. `deepseek/deepseek-reasoning`. */
  readonly name: string;
}

/** A stream spelled out in the test (for shapes no recording has), served the same way. */
export interface InlineStream {
  readonly chunks: readonly string[];
  /** The body a non-stream request gets instead. */
  readonly whole?: unknown;
}

/** A stream that never ends: `chunk` every 10 ms until the gateway hangs up. */
export interface EndlessStream {
  readonly endless: string;
}

/** A recorded upstream error: served with `status` and the fixture file's body. */
export interface RecordedError {
  readonly status: number;
  /** Path under fixtures/chunks, e.g. `openai/openai-error.1.json`. */
  readonly file: string;
}

export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface RecordedUpstream {
  /** Base URL to put in routes.yaml (`http://127.0.0.1:PORT/v1`). */
  readonly baseUrl: string;
  /** Resolves when the gateway next hangs up on an endless stream. */
  nextHangUp(): Promise<void>;
  /** Every request received, in order. */
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

export function fixtureLines(name: string): string[] {
  return readFixture(`chunks/${name}.chunks.txt`)
    .split("\n")
    .filter((line) => line.trim() !== "");
}

export function fixtureJson(file: string): Record<string, unknown> {
  return JSON.parse(readFixture(`chunks/${file}`)) as Record<string, unknown>;
}

/**
 * A loopback emulator of an OpenAI-style reasoning upstream. The request's
 * `model` picks the recording; `stream: true` replays the recorded chunks as
 * `data: <line>\n\n` then `data: [DONE]`, otherwise the recorded JSON body.
 * Chunks are written one per network write so the gateway's SSE parser sees
 * real framing boundaries.
 */
export async function startRecordedUpstream(recordings: Record<string, Recording | RecordedError | InlineStream | EndlessStream>): Promise<RecordedUpstream> {
  const received: ReceivedRequest[] = [];
  const hangUps = new EventEmitter();
  const server = createServer((request, response) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (text += chunk));
    request.on("end", async () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ headers: request.headers, body });
      const recording = recordings[String(body.model)];
      if (!recording || request.url !== "/v1/chat/completions") {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            error: { message: `The model \`${String(body.model)}\` does not exist`, type: "invalid_request_error", param: null, code: "model_not_found" },
          }),
        );
        return;
      }
      if ("status" in recording) {
        response.writeHead(recording.status, { "content-type": "application/json" });
        response.end(readFixture(`chunks/${recording.file}`));
        return;
      }
      if ("endless" in recording) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const timer = setInterval(() => response.write(`data: ${recording.endless}\n\n`), 10);
        response.once("close", () => {
          clearInterval(timer);
          hangUps.emit("hang-up");
        });
        return;
      }
      if ("chunks" in recording && body.stream !== true && recording.whole !== undefined) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(recording.whole));
        return;
      }
      if ("chunks" in recording) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        for (const line of recording.chunks) response.write(`data: ${line}\n\n`);
        response.end("data: [DONE]\n\n");
        return;
      }
      if (body.stream !== true) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(fixtureJson(`${recording.name}.json`)));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const line of fixtureLines(recording.name)) {
        if (!response.write(`data: ${line}\n\n`)) await new Promise((resolve) => response.once("drain", resolve));
      }
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    nextHangUp: () => new Promise<void>((resolve) => hangUps.once("hang-up", () => resolve())),
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
