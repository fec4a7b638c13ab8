import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { RATE_LIMITED, startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "./routes.js";

// routes.yaml deadlines, keepalives while the upstream has not answered, and what a 429 passes on.
let upstream: FaultInjector;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({
    routes: faultRoutes(upstream.baseUrl(), "{ first_byte: 0.6, idle: 0.3, total: 1.2 }"),
    // a keepalive comment is due after 0.1 s of silence (the sweep runs every 250 ms)
    gatewayOptions: { keepaliveSeconds: 0.1 },
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const ask = (model: string, stream: boolean, sessionId: string) =>
  gateway.post("/v1/chat/completions", { model, stream, messages: [{ role: "user", content: "hi" }] }, { "x-session-id": sessionId });

type Chunk = { error?: { code: string; message: string } };

test("an upstream that never answers: a non-streaming client gets a 504 upstream_timeout naming first_byte, with X-Session-Id, and the upstream is hung up on", async () => {
  const exchange = upstream.next("stall");
  const started = performance.now();
  const response = await ask("stall", false, "deadline-stall");
  const elapsed = performance.now() - started;
  expect(response.status).toBe(504);
  expect(response.headers.get("x-session-id")).toBe("deadline-stall");
  const body = (await response.json()) as Chunk;
  expect(body.error).toMatchObject({ code: "upstream_timeout", type: "upstream_error" });
  expect(body.error!.message).toContain("deadlines.first_byte");
  expect(elapsed).toBeGreaterThanOrEqual(550);
  expect(elapsed).toBeLessThan(5_000);
  await (
    await exchange
  ).closed;
});

test("while the upstream has not answered, a streaming client gets `: keepalive` comments, then an error event when first_byte passes", async () => {
  const response = await ask("stall", true, "deadline-stall-stream");
  expect(response.status).toBe(200); // the stream was opened to keep the client waiting
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  expect(response.headers.get("x-session-id")).toBe("deadline-stall-stream");
  const { events, done, raw } = await readSse(response);
  expect(raw.startsWith(": keepalive\n\n")).toBe(true);
  expect(done).toBe(true);
  expect((events.at(-1) as Chunk).error).toMatchObject({ code: "upstream_timeout" });
  expect((events.at(-1) as Chunk).error!.message).toContain("first_byte");
});

test("an upstream that goes silent mid-answer is cut off by the idle deadline", async () => {
  const exchange = upstream.next("stall-after-head");
  const response = await ask("stall-after-head", true, "deadline-idle");
  const { events, done } = await readSse(response);
  expect(done).toBe(true);
  expect((events.at(-1) as Chunk).error).toMatchObject({ code: "upstream_timeout" });
  expect((events.at(-1) as Chunk).error!.message).toContain("deadlines.idle");
  await (
    await exchange
  ).closed;
});

test("an upstream that trickles a byte at a time is cut off by the total deadline", async () => {
  const exchange = upstream.next("trickle");
  const started = performance.now();
  const response = await ask("trickle", true, "deadline-total");
  const { events } = await readSse(response);
  const elapsed = performance.now() - started;
  expect((events.at(-1) as Chunk).error).toMatchObject({ code: "upstream_timeout" });
  expect((events.at(-1) as Chunk).error!.message).toContain("deadlines.total");
  expect(elapsed).toBeGreaterThanOrEqual(1_150);
  expect(elapsed).toBeLessThan(6_000);
  await (
    await exchange
  ).closed; // the trickling upstream was aborted, not left running
});

test("a 429 passes on Retry-After and the rate-limit headers (and nothing else of the upstream's), with X-Session-Id", async () => {
  for (const stream of [false, true]) {
    const response = await ask("rate-limit", stream, "deadline-429");
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(response.headers.get("x-ratelimit-reset-requests")).toBe("7s");
    expect(response.headers.get("x-unrelated")).toBeNull();
    expect(response.headers.get("x-session-id")).toBe("deadline-429");
    const body = (await response.json()) as Chunk;
    expect(body.error!.message).toBe(RATE_LIMITED);
  }
});

test("a 502 for an unreachable upstream carries X-Session-Id", async () => {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model: "unreachable", messages: [{ role: "user", content: "hi" }] },
    { "x-session-id": "deadline-502" },
  );
  expect(response.status).toBe(502);
  expect(response.headers.get("x-session-id")).toBe("deadline-502");
  const fresh = await gateway.post("/v1/chat/completions", { model: "unreachable", messages: [{ role: "user", content: "hi" }] });
  expect(fresh.status).toBe(502);
  expect(fresh.headers.get("x-session-id")).toMatch(/^sess_/);
});

test("routes.yaml refuses a deadline that is not a positive number of seconds", async () => {
  const { loadRoutesFile } = await import("../../src/routing/routes/load-routes.js");
  const { writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const file = join(gateway.home, "bad-deadlines.yaml");
  writeFileSync(file, faultRoutes(upstream.baseUrl(), "{ first_byte: 0, total: soon }"));
  const loaded = await loadRoutesFile(file, { knownPlugins: new Set(["openai-compatible"]) });
  expect(loaded.ok).toBe(false);
  if (!loaded.ok) expect(loaded.problems.map((problem) => `${problem.line}: ${problem.message}`).join("\n")).toMatch(/deadlines/);
  writeFileSync(file, faultRoutes(upstream.baseUrl(), "{ first_byte: 2.5 }"));
  const good = await loadRoutesFile(file, { knownPlugins: new Set(["openai-compatible"]) });
  expect(good.ok && good.table.providers.get("faulty")?.deadlines).toEqual({ firstByteMs: 2_500, idleMs: 60_000, totalMs: 1_800_000 });
});

test("Responses: keepalives while waiting, then an `error` event naming the deadline", async () => {
  const response = await gateway.post("/v1/responses", { model: "stall", stream: true, input: "hi" }, { "x-session-id": "deadline-responses" });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-session-id")).toBe("deadline-responses");
  const raw = await response.text();
  expect(raw.startsWith(": keepalive\n\n")).toBe(true);
  const error = JSON.parse(/event: error\ndata: (.*)\n\n/.exec(raw)![1]!) as { type: string; code: string; message: string };
  expect(error).toMatchObject({ type: "error", code: "upstream_timeout" });
  expect(error.message).toContain("first_byte");
});

test("/metrics counts the requests each deadline cut, per provider", async () => {
  const cuts = async () => {
    const text = await (await gateway.fetch("/metrics")).text();
    const count = (deadline: string) => {
      const line = text
        .split("\n")
        .find((candidate) => candidate.startsWith(`carrierd_upstream_deadline_cuts_total{provider="faulty",deadline="${deadline}"} `));
      return line === undefined ? 0 : Number(line.split(" ")[1]);
    };
    return { first_byte: count("first_byte"), idle: count("idle"), total: count("total") };
  };
  const before = await cuts();
  expect((await ask("stall", false, "cut-first-byte")).status).toBe(504);
  await readSse(await ask("stall", true, "cut-first-byte-stream"));
  await readSse(await ask("stall-after-head", true, "cut-idle"));
  await readSse(await ask("trickle", true, "cut-total"));
  // an answer in time and a refusal are not cuts
  expect((await readSse(await ask("ok", true, "cut-none"))).done).toBe(true);
  expect((await ask("rate-limit", false, "cut-none")).status).toBe(429);
  const after = await cuts();
  expect({ first_byte: after.first_byte - before.first_byte, idle: after.idle - before.idle, total: after.total - before.total }).toEqual({
    first_byte: 2,
    idle: 1,
    total: 1,
  });
  const text = await (await gateway.fetch("/metrics")).text();
  expect(text).toContain("# TYPE carrierd_upstream_deadline_cuts_total counter");
  expect(text).not.toMatch(/carrierd_upstream_deadline_cuts_total\{provider="nowhere"/);
});
