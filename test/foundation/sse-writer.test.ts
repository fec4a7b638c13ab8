import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SseWriter } from "../../src/ingress/sse.js";
import { turnsOfTheLoop } from "../support/wait-for.js";

let url: string;
let current: ServerResponse | undefined;
const server = createServer((_request, response) => {
  current = response;
  writerReady?.(new SseWriter(response, { "x-session-id": "s1" }, 0.3));
});
let writerReady: ((writer: SseWriter) => void) | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  current?.destroy();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

test("an idle stream gets ': keepalive' comments, and the headers of an event stream", async () => {
  const opened = new Promise<SseWriter>((resolve) => (writerReady = resolve));
  const response = await fetch(url);
  const writer = await opened;
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  expect(response.headers.get("cache-control")).toBe("no-cache");
  expect(response.headers.get("x-session-id")).toBe("s1");
  const reader = response.body!.getReader();
  let seen = "";
  while (!seen.includes(": keepalive\n\n")) {
    const chunk = await reader.read();
    if (chunk.done) break;
    seen += new TextDecoder().decode(chunk.value);
  }
  expect(seen).toBe(": keepalive\n\n");
  writer.data('{"a":1}');
  writer.end("data: [DONE]\n\n");
  let rest = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
  expect(rest.replaceAll(": keepalive\n\n", "")).toBe('data: {"a":1}\n\ndata: [DONE]\n\n');
});

test("an event name with CR or LF is refused, so nothing can inject framing", async () => {
  const opened = new Promise<SseWriter>((resolve) => (writerReady = resolve));
  const response = await fetch(url);
  const writer = await opened;
  expect(() => writer.data("{}", "message\ndata: injected")).toThrow(/CR or LF/);
  expect(() => writer.data("{}", "message\r")).toThrow(/CR or LF/);
  writer.data("{}", "ok");
  writer.end();
  expect(await response.text()).toBe("event: ok\ndata: {}\n\n");
});

test("once held for the end, the pass's events leave with the end in one socket write, not before", async () => {
  const opened = new Promise<SseWriter>((resolve) => (writerReady = resolve));
  const response = await fetch(url);
  const writer = await opened;
  const socketWrites: number[] = [];
  const write = current!.write.bind(current!);
  current!.write = ((chunk: Buffer, ...rest: never[]) => {
    socketWrites.push(chunk.length);
    return write(chunk, ...rest);
  }) as typeof current.write;
  writer.data('{"delta":"a"}');
  writer.holdUntilEnd();
  writer.data('{"delta":"b"}');
  await turnsOfTheLoop(5); // the writer flushes on the next tick: several passes, and nothing leaves while held
  expect(socketWrites).toEqual([]);
  writer.end("data: [DONE]\n\n");
  expect(await response.text()).toBe('data: {"delta":"a"}\n\ndata: {"delta":"b"}\n\ndata: [DONE]\n\n');
  expect(socketWrites).toEqual([]); // all of it went out through end()
});
