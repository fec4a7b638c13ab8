import "reflect-metadata";
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "./routes.js";

// Backpressure end to end: a client that never reads pauses its upstream, holds a bounded amount, and is cut off after the stall deadline.
let upstream: FaultInjector;
let gateway: TestGateway;
const STREAM_BUFFER = 64 * 1024;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({ routes: faultRoutes(upstream.baseUrl()), gatewayOptions: { streamBufferBytes: STREAM_BUFFER, clientStallSeconds: 1.5 } });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** Sends a streamed chat request on a raw socket and never reads the answer. */
async function neverReads(): Promise<Socket> {
  const socket = connect(gateway.port, "127.0.0.1");
  await once(socket, "connect");
  socket.pause(); // not one byte of the answer is read
  const body = JSON.stringify({ model: "flood", stream: true, messages: [{ role: "user", content: "think forever" }] });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref())]);
}

test("five clients that never read: each upstream is paused (its socket write blocks), memory stays bounded, /health stays fast, and each is cut off and its upstream aborted", async () => {
  const rssBefore = process.memoryUsage().rss;
  const exchanges = Array.from({ length: 5 }, () => upstream.next("flood"));
  const sockets = await Promise.all(Array.from({ length: 5 }, () => neverReads()));
  const flooding = await Promise.all(exchanges);
  // the gateway stopped reading each upstream: its writes are refused and never drain
  await within(Promise.all(flooding.map((exchange) => exchange.blocked)), 8_000, "every upstream blocked");
  const written = flooding.map((exchange) => exchange.bytesWritten);
  // what each upstream got rid of is what the kernel buffers on both sides and the gateway's bounded buffers hold; an unpaused one writes gigabytes in this time
  for (const bytes of written) expect(bytes).toBeLessThan(32 * 1024 * 1024);
  const health = performance.now();
  expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  expect(performance.now() - health).toBeLessThan(500);
  // cut off after the stall deadline, and the upstream request aborted with it
  await within(Promise.all(flooding.map((exchange) => exchange.closed)), 8_000, "every upstream aborted");
  // and it stayed paused until then: an unpaused upstream writes ~50 MB a second here
  for (const exchange of flooding) expect(exchange.bytesWritten).toBeLessThan(32 * 1024 * 1024);
  await within(Promise.all(sockets.map((socket) => (socket.destroyed ? Promise.resolve() : once(socket.resume(), "close")))), 8_000, "every client cut off");
  expect(process.memoryUsage().rss - rssBefore).toBeLessThan(400 * 1024 * 1024);
});

test("a client that keeps up is not cut off: the control", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "ok", stream: true, messages: [{ role: "user", content: "2+2?" }] });
  const text = await response.text();
  expect(text).toContain("Four.");
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
});

test("a client that reads slowly but steadily is held back, not cut off", async () => {
  const exchange = upstream.next("flood");
  const socket = await neverReads();
  const flooding = await exchange;
  let upstreamClosed = false;
  void flooding.closed.then(() => (upstreamClosed = true));
  let received = 0;
  socket.on("data", (data: Buffer) => (received += data.length));
  socket.pause();
  // it reads in short bursts (20 ms of every 200): far slower than the upstream writes, never stalled for the 1.5 s deadline
  const reader = setInterval(() => {
    socket.resume();
    setTimeout(() => socket.pause(), 20);
  }, 200);
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  clearInterval(reader);
  expect(received).toBeGreaterThan(256 * 1024);
  // held back all the same: the upstream wrote no more than the bounded buffers and what the client took
  expect(flooding.bytesWritten - received).toBeLessThan(32 * 1024 * 1024);
  expect(upstreamClosed).toBe(false);
  expect(socket.destroyed).toBe(false);
  socket.destroy();
  await within(flooding.closed, 5_000, "the upstream aborted once the client left");
});
