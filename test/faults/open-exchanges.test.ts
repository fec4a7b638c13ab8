import "reflect-metadata";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, test } from "vitest";
import { UPSTREAM_HTTP } from "../../src/foundation/container/tokens.js";
import type { UpstreamHttp } from "../../src/providers/upstream/upstream-http.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { waitFor } from "../support/wait-for.js";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "./routes.js";

// The transport's count of requests open upstream, which the SQLite store reads to tell a turn that completes alone
// (docs/performance.md#a-turn-made-durable): up while a request waits on its upstream, back to 0 however it ends.
let upstream: FaultInjector;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({ routes: faultRoutes(upstream.baseUrl(), "{ first_byte: 0.6, idle: 0.3, total: 1.2 }") });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const openUpstream = () => gateway.container.resolve<UpstreamHttp>(UPSTREAM_HTTP).open.count;
const ask = (model: string, stream: boolean, signal?: AbortSignal, content = `asking ${model}`) =>
  gateway.fetch("/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content }] }),
    headers: { "content-type": "application/json" },
    signal,
  });

test("a request counts as open while it waits on its upstream, and stops counting when it is answered, refused, cut by a deadline, unreachable or left by its client", async () => {
  expect(openUpstream()).toBe(0);
  const stalled = upstream.next("stall");
  const asking = ask("stall", false);
  await stalled;
  expect(openUpstream()).toBe(1);
  expect((await asking).status).toBe(504); // first_byte
  expect(openUpstream()).toBe(0);

  expect((await readSse(await ask("ok", true))).done).toBe(true);
  expect(openUpstream()).toBe(0);
  expect((await ask("rate-limit", false)).status).toBe(429);
  expect(openUpstream()).toBe(0);
  await readSse(await ask("cut", true)); // ended without a finish reason
  expect(openUpstream()).toBe(0);
  expect((await ask("unreachable", false)).status).toBe(502);
  expect(openUpstream()).toBe(0);

  const flooding = upstream.next("flood");
  const client = new AbortController();
  const response = await ask("flood", true, client.signal);
  expect(response.status).toBe(200);
  const exchange = await flooding;
  expect(openUpstream()).toBe(1);
  client.abort(); // the client goes away mid-stream: the upstream is hung up on
  await exchange.closed;
  await waitFor(() => openUpstream() === 0, { what: "the left exchange no longer counted" });
});

test("a turn that completes while another request waits on its upstream is committed to state.db before its answer ends, not journaled", async () => {
  const stalled = upstream.next("stall");
  const waiting = ask("stall", false);
  await stalled;
  expect((await readSse(await ask("ok", true, undefined, "asked beside a stalled request"))).done).toBe(true);
  // read on a connection of its own, as another process would: a journaled turn reaches it only at its later commit
  const db = new Database(join(gateway.home, "state.db"), { readonly: true });
  try {
    expect(db.prepare("SELECT count(*) FROM turns WHERE prompt LIKE '%asked beside a stalled request%'").pluck().get()).toBe(1);
  } finally {
    db.close();
  }
  expect((await waiting).status).toBe(504);
});
