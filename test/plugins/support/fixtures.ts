import { createParser } from "eventsource-parser";
import { parse } from "yaml";
import { readFixture } from "../../support/fixtures-dir.js";

/** One recorded HTTP exchange of a go-vcr cassette. */
export interface Interaction {
  request: { url: string; method: string; body: string; headers: Record<string, string[]> };
  response: { status: number; body: string; contentType: string };
  /** A binary response body (`!!binary`, e.g. an AWS event stream); `response.body` is "" then. */
  responseBytes: Uint8Array | undefined;
}

/** Reads `cassettes/<path>.yaml` (go-vcr v2). */
export function cassette(path: string): Interaction[] {
  const document = parse(readFixture(`cassettes/${path}.yaml`)) as { interactions: RawInteraction[] };
  return document.interactions.map((raw) => ({
    request: { url: raw.request.url, method: raw.request.method, body: raw.request.body, headers: raw.request.headers ?? {} },
    response: {
      status: raw.response.code,
      body: typeof raw.response.body === "string" ? raw.response.body : "",
      contentType: raw.response.headers?.["Content-Type"]?.[0] ?? "application/json",
    },
    responseBytes: typeof raw.response.body === "string" ? undefined : (raw.response.body as Uint8Array),
  }));
}

interface RawInteraction {
  request: { url: string; method: string; body: string; headers?: Record<string, string[]> };
  response: { code: number; body: string | Uint8Array; headers?: Record<string, string[]> };
}

/** A recorded request or response body, parsed. */
export function json(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

/** The events of a recorded SSE body, parsed the way the core parses them (eventsource-parser). */
export function sseEvents(body: string): { event?: string; data: string }[] {
  const events: { event?: string; data: string }[] = [];
  const parser = createParser({ onEvent: (message) => events.push({ event: message.event, data: message.data }) });
  parser.feed(body);
  return events;
}

/** `chunks/<provider>/<name>`: a `.chunks.txt` file is one JSON payload per line. */
export function chunkLines(path: string): string[] {
  return readFixture(`chunks/${path}`)
    .split("\n")
    .filter((line) => line.trim().length > 0);
}

export function chunkJson(path: string): Record<string, unknown> {
  return JSON.parse(readFixture(`chunks/${path}`)) as Record<string, unknown>;
}
