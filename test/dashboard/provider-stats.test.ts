import "reflect-metadata";
import { writeFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { EventBus, type GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import { ProviderStats } from "../../src/operations/provider-stats/provider-stats.js";
import type { WindowSnapshot } from "../../src/operations/provider-stats/stats-snapshot.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import type { OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";
import { loadEventValidators, schemaProblems } from "../events/event-schemas.js";
import { addKey, bearer } from "../keys/keys-support.js";
import { dashboardRoutes, startDashboardUpstreams } from "./dashboard-upstreams.js";

describe("the counting, on a bus of its own", () => {
  afterEach(() => vi.useRealTimers());

  test("a turn counts in every window until it is older than the window", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-12-03T12:00:05Z"));
    const bus = new EventBus();
    const stats = new ProviderStats(bus);
    const turn = (id: string, provider = "p", model = "m") => {
      bus.publish({ type: "turn.started", turn_id: id, provider, upstream_model: model, upstream_ms: 5 });
      bus.publish({ type: "reasoning.delta", turn_id: id, text: "…" });
      bus.publish({ type: "turn.completed", turn_id: id, usage: { prompt_tokens: 10, completion_tokens: 4 } });
    };
    turn("t1");
    turn("t2");
    bus.publish({ type: "upstream.failed", provider: "p", upstream_model: "m", error: { code: "upstream_error", status: 429, message: "slow down" } });
    bus.publish({ type: "turn.started", turn_id: "t3", provider: "p", upstream_model: "m", upstream_ms: 1 });
    bus.publish({ type: "turn.failed", turn_id: "t3", error: { message: "broke", code: "upstream_stream_interrupted" } });
    bus.publish({ type: "verdict.recorded", provider: "p", model: "m", field: "reasoning", fields: ["reasoning"] });
    bus.publish({ type: "routes.reloaded", revision: "b", previous_revision: "a" });

    const now = stats.snapshot("5m");
    expect(now.reloads).toEqual({ reloaded: 1, rejected: 0 });
    expect(now.providers).toHaveLength(1);
    const [p] = now.providers;
    expect(p).toMatchObject({ provider: "p", model: "m", requests: 4, completed: 2, failed: 2, verdicts: 1, tokens: { input: 20, output: 8 } });
    expect(p!.errors).toEqual([
      { code: "upstream_error", status: 429, count: 1 },
      { code: "upstream_stream_interrupted", status: null, count: 1 },
    ]);
    expect(p!.time_to_completion_ms.count).toBe(2);
    expect(p!.time_to_first_reasoning_ms.p95).toBeGreaterThanOrEqual(5 / 1.08);
    expect(p!.points.t).toHaveLength(30);
    expect(p!.points.requests.reduce((a, b) => a + b, 0)).toBe(4);

    vi.setSystemTime(new Date("2026-12-03T12:06:00Z"));
    expect(stats.snapshot("5m").providers).toEqual([]);
    expect(stats.snapshot("5m").reloads.reloaded).toBe(0);
    expect(stats.snapshot("1h").providers[0]).toMatchObject({ requests: 4, failed: 2 });
    expect(stats.snapshot("1h").providers[0]!.points.t).toHaveLength(60);
    vi.setSystemTime(new Date("2026-12-03T13:10:00Z"));
    expect(stats.snapshot("1h").providers).toEqual([]);
    expect(stats.snapshot("24h").providers[0]).toMatchObject({ requests: 4, completed: 2, verdicts: 1 });
    vi.setSystemTime(new Date("2026-12-04T12:10:00Z"));
    expect(stats.snapshot("24h").providers).toEqual([]);
    // an interval reused a day later starts from zero
    turn("t4");
    expect(stats.snapshot("24h").providers[0]).toMatchObject({ requests: 1, completed: 1 });
    stats.close();
  });

  test("names the upstream never served share one row per provider; a model gets its own once served, and the read stays small", () => {
    const bus = new EventBus();
    const stats = new ProviderStats(bus);
    const served = (id: string, model: string) => {
      bus.publish({ type: "turn.started", turn_id: id, provider: "openrouter", upstream_model: model, upstream_ms: 3 });
      bus.publish({ type: "reasoning.delta", turn_id: id, text: "…" });
      bus.publish({ type: "turn.completed", turn_id: id, usage: { prompt_tokens: 2, completion_tokens: 1 } });
    };
    // one key's 300 made-up names through a glob route: the upstream refuses each, before or after its turn started
    for (let i = 0; i < 300; i++) {
      if (i % 2) bus.publish({ type: "upstream.failed", provider: "openrouter", upstream_model: `junk-${i}`, error: { code: "model_not_found", status: 404 } });
      else {
        bus.publish({ type: "turn.started", turn_id: `j${i}`, provider: "openrouter", upstream_model: `junk-${i}`, upstream_ms: 1 });
        bus.publish({ type: "turn.failed", turn_id: `j${i}`, error: { code: "upstream_error", status: 404 } });
      }
    }
    // a real model first used afterwards: its own row, its first request moved out of the row of names not served
    served("r1", "real/model");
    served("r2", "real/model");
    const snapshot = stats.snapshot("24h");
    expect(snapshot.providers.map((row) => [row.model, row.requests, row.completed, row.failed])).toEqual([
      ["(not served)", 300, 0, 300],
      ["real/model", 2, 2, 0],
    ]);
    expect(snapshot.providers[1]!.time_to_first_reasoning_ms.count).toBe(2);
    expect(JSON.stringify({ windows: [stats.snapshot("5m"), stats.snapshot("1h"), snapshot] }).length).toBeLessThan(40_000);
    stats.close();
  });

  test("percentiles come from the durations, within the 8 % the buckets allow", () => {
    const bus = new EventBus();
    const stats = new ProviderStats(bus);
    // turn.started's upstream_ms sets when the request went upstream: durations of 100 ms … 2000 ms
    for (let i = 1; i <= 20; i++) {
      bus.publish({ type: "turn.started", turn_id: `d${i}`, provider: "p", upstream_model: "m", upstream_ms: i * 100 });
      bus.publish({ type: "turn.completed", turn_id: `d${i}`, usage: null });
    }
    const { time_to_completion_ms: completion } = stats.snapshot("5m").providers[0]!;
    expect(completion.count).toBe(20);
    expect(completion.p50! / 1000).toBeCloseTo(1, 0);
    expect(Math.abs(completion.p50! - 1000) / 1000).toBeLessThan(0.09);
    expect(Math.abs(completion.p95! - 1900) / 1900).toBeLessThan(0.09);
    stats.close();
  });

  test("events counted in batches count once each, in the interval they arrived in, read before a batch is full or after", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-12-03T12:00:05Z"));
    const bus = new EventBus();
    const stats = new ProviderStats(bus);
    const turns = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        bus.publish({ type: "turn.started", turn_id: `b${i}`, provider: "p", upstream_model: "m", upstream_ms: 1 });
        bus.publish({ type: "turn.completed", turn_id: `b${i}`, usage: { prompt_tokens: 1, completion_tokens: 1 } });
      }
    };
    turns(0, 3);
    expect(stats.snapshot("5m").providers[0]).toMatchObject({ requests: 3, completed: 3 });
    turns(3, 997);
    await new Promise((resolve) => setImmediate(resolve));
    // a minute later: what arrived before counts in the earlier interval
    vi.setSystemTime(new Date("2026-12-03T12:01:05Z"));
    turns(1000, 5);
    // read a minute later still: the five waiting count in the interval they arrived in
    vi.setSystemTime(new Date("2026-12-03T12:02:05Z"));
    const [p] = stats.snapshot("5m").providers;
    expect(p).toMatchObject({ requests: 1005, completed: 1005, tokens: { input: 1005, output: 1005 } });
    expect(p!.time_to_completion_ms.count).toBe(1005);
    expect(p!.points.requests.slice(-13)).toEqual([1000, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0]);
    stats.close();
  });
});

describe("GET /v1/stats/providers on a real gateway", () => {
  let upstream: OpenAIUpstream;
  let gateway: TestGateway;
  const events: GatewayEvent[] = [];
  beforeAll(async () => {
    upstream = await startDashboardUpstreams();
    gateway = await startTestGateway({ routes: dashboardRoutes(upstream) });
    gateway.container.resolve<EventBus>(EVENT_BUS).subscribe((event) => events.push(event));
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  async function window(name: string): Promise<WindowSnapshot> {
    const response = await gateway.fetch(`/v1/stats/providers?window=${name}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; windows: WindowSnapshot[] };
    expect(body.object).toBe("provider_stats");
    return body.windows[0]!;
  }

  test("requests, errors by code, latencies, tokens, verdicts and reloads, as they happened", async () => {
    for (let i = 0; i < 6; i++)
      expect((await ask(gateway, { model: "demo", messages: [{ role: "user", content: `sum ${i}` }], stream: i % 2 === 0 })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const failed = await ask(gateway, { model: "broken/big-model", messages: [{ role: "user", content: `hello ${i}` }] });
      expect(failed.status).toBe(503);
    }
    // turn 2 of a strictp session carries `reasoning`: refused, verdict recorded, retried without it
    const history: Message[] = [{ role: "user", content: "first question" }];
    const first = await ask(gateway, { model: "strictp/strict-model", messages: history });
    history.push(first.kept, { role: "user", content: "second question" });
    expect((await ask(gateway, { model: "strictp/strict-model", messages: history })).status).toBe(200);
    writeFileSync(gateway.routesPath, `${dashboardRoutes(upstream)}# edited\n`);
    await gateway.reloadRoutes();

    const snapshot = await window("5m");
    expect(snapshot).toMatchObject({ window: "5m", seconds: 300, step_seconds: 10, reloads: { reloaded: 1, rejected: 0 } });
    const byProvider = Object.fromEntries(snapshot.providers.map((entry) => [entry.provider, entry]));
    expect(snapshot.providers.map((entry) => entry.provider)).toEqual(["demo", "broken", "strictp"]);
    expect(byProvider.demo).toMatchObject({ model: "demo-reasoner", requests: 6, completed: 6, failed: 0, errors: [], verdicts: 0 });
    expect(byProvider.demo!.tokens.input).toBeGreaterThan(0);
    expect(byProvider.demo!.tokens.output).toBeGreaterThan(0);
    expect(byProvider.demo!.time_to_first_reasoning_ms.count).toBe(6);
    expect(byProvider.demo!.time_to_completion_ms.p95).toBeGreaterThanOrEqual(byProvider.demo!.time_to_completion_ms.p50!);
    // an upstream that never served big-model: its requests are counted in the provider's row of names not served
    expect(byProvider.broken).toMatchObject({
      model: "(not served)",
      requests: 3,
      completed: 0,
      failed: 3,
      errors: [{ code: "upstream_error", status: 503, count: 3 }],
      time_to_completion_ms: { p50: null, p95: null, count: 0 },
    });
    expect(byProvider.strictp).toMatchObject({ model: "strict-model", requests: 2, completed: 2, failed: 0, verdicts: 1 });

    const all = (await (await gateway.fetch("/v1/stats/providers")).json()) as { windows: WindowSnapshot[] };
    expect(all.windows.map((one) => [one.window, one.step_seconds, one.providers.length])).toEqual([
      ["5m", 10, 3],
      ["1h", 60, 3],
      ["24h", 300, 3],
    ]);
  });

  test("upstream.failed is published for a refused request and matches its schema", () => {
    const failed = events.filter((event) => event.type === "upstream.failed");
    expect(failed).toHaveLength(3);
    expect(failed[0]).toMatchObject({
      provider: "broken",
      upstream_model: "big-model",
      model: "broken/big-model",
      error: { code: "upstream_error", status: 503 },
    });
    const validators = loadEventValidators();
    for (const event of failed) expect(schemaProblems(validators, JSON.parse(JSON.stringify(event)) as Record<string, unknown>)).toEqual([]);
  });

  test("a window that does not exist is a 400 naming it; a key without admin is a 403", async () => {
    const bad = await gateway.fetch("/v1/stats/providers?window=7d");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: "invalid_request", param: "window" });
    const chatKey = await addKey(gateway, "chat-only", { scopes: ["chat"] });
    const refused = await fetch(`${gateway.url}/v1/stats/providers`, { headers: bearer(chatKey) });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("insufficient_scope");
  });

  test("the page's files are served from the install, anything else is a 404", async () => {
    const script = await fetch(`${gateway.url}/dashboard/uplot.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain("uPlot");
    const style = await fetch(`${gateway.url}/dashboard/uplot.css`);
    expect(style.headers.get("content-type")).toMatch(/^text\/css/);
    // an encoded slash is no asset name: the path fits no row, and without a key the server says no more than 401
    expect((await fetch(`${gateway.url}/dashboard/..%2Fpackage.json`)).status).toBe(401);
    for (const name of ["nope.js", "..package.json", "dashboard.html", "constructor", "__proto__"]) {
      const missing = await fetch(`${gateway.url}/dashboard/${name}`);
      expect(missing.status, name).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
    const page = await fetch(`${gateway.url}/dashboard`);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  });
});
