import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test, type TestContext } from "vitest";
import { launchChromium, SKIP_BROWSER } from "../support/browser.js";
import type { WindowSnapshot } from "../../src/operations/provider-stats/stats-snapshot.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import type { OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";
import { dashboardRoutes, startDashboardUpstreams } from "./dashboard-upstreams.js";

/**
 * The dashboard in Debian's Chromium, driven by playwright-core (as
 * test/events/dashboard.browser.test.ts): history made before the page
 * opens, search, a turn's reasoning and replay decision, and the provider
 * panel after a load. Screenshots are attached to the test's output.
 */
const skip = SKIP_BROWSER;
const DEMO_SESSIONS = 17;

let upstream: OpenAIUpstream;
let gateway: TestGateway;
let browser: Browser;
let tripReasoning = "";
const shots = mkdtempSync(join(tmpdir(), "carrierd-dashboard-history-"));

beforeAll(async () => {
  if (skip) return;
  upstream = await startDashboardUpstreams();
  gateway = await startTestGateway({ routes: dashboardRoutes(upstream) });
  // history from before the page opens: a strict provider's session of three turns (a verdict on turn 2), then demo sessions
  const history: Message[] = [{ role: "user", content: "What should I see in Paris?" }];
  for (const follow of ["And in the evening?", "Where do I eat?"]) {
    const turn = await ask(gateway, { model: "strictp/strict-model", messages: history }, { "x-session-id": "trip-to-paris" });
    expect(turn.status, JSON.stringify(turn.error)).toBe(200);
    tripReasoning ||= turn.reasoning;
    history.push(turn.kept, { role: "user", content: follow });
  }
  expect((await ask(gateway, { model: "strictp/strict-model", messages: history }, { "x-session-id": "trip-to-paris" })).status).toBe(200);
  for (let i = 1; i <= DEMO_SESSIONS; i++) {
    const topic = i === 7 ? "Tell me about giraffes" : `What is ${i} plus ${i}?`;
    expect((await ask(gateway, { model: "demo", messages: [{ role: "user", content: topic }] }, { "x-session-id": `demo-${i}` })).status).toBe(200);
  }
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await upstream?.close();
});

async function shoot(page: Page, context: TestContext, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await context.annotate(`screenshot: ${name}`, { path, contentType: "image/png" });
}

test.skipIf(skip)(
  "sessions from before the page opened, search, a turn's reasoning and replay decision, and the provider panel after a load",
  async (context) => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    expect((await page.goto(`${gateway.url}/dashboard`))?.status()).toBe(200);
    await page.fill("#key", gateway.key);
    await page.click("#connect");
    await page.waitForFunction(() => document.getElementById("status-text")?.textContent === "live");

    // history is there on open: the newest page, the oldest session on the next
    const rows = page.locator("#session-rows tr");
    await expect.poll(() => rows.count()).toBe(15);
    expect(await rows.first().getAttribute("data-session-id")).toBe(`demo-${DEMO_SESSIONS}`);
    expect(await page.locator('#session-rows [data-session-id="trip-to-paris"]').count()).toBe(0);
    await shoot(page, context, "sessions");
    await page.click("#older");
    await page.locator('#session-rows [data-session-id="trip-to-paris"]').waitFor();
    expect(await rows.count()).toBe(DEMO_SESSIONS + 1 - 15);
    expect(await page.isDisabled("#older")).toBe(true);
    await page.click("#newer");
    await page.locator(`#session-rows [data-session-id="demo-${DEMO_SESSIONS}"]`).waitFor();

    // search narrows to the sessions whose text holds the words
    await page.fill("#search", "giraffes");
    await page.click("#search-button");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-session-id")).toBe("demo-7");
    // a provider filter alone: the one strictp session
    await page.fill("#search", "");
    await page.fill("#filter-provider", "strictp");
    await page.click("#search-button");
    await expect.poll(() => rows.first().getAttribute("data-session-id")).toBe("trip-to-paris");
    expect(await rows.count()).toBe(1);
    await page.fill("#filter-provider", "");
    await page.fill("#search", "paris");
    await page.click("#search-button");
    await page.locator('#session-rows [data-session-id="trip-to-paris"]').waitFor();
    expect(await rows.count()).toBe(1);

    // the turn view: reasoning beside the answer, and the replay decision in words
    await page.click('#session-rows [data-session-id="trip-to-paris"]');
    const turns = page.locator("#turn-view .stored-turn");
    await expect.poll(() => turns.count()).toBe(3);
    const third = turns.nth(2);
    const today = new Date().toISOString().slice(0, 10);
    const decision = await third.locator('[data-testid="replay"]').textContent();
    expect(decision).toContain(
      `turn 3 sent upstream with the reasoning of turns 1–2 attached as reasoning_content; reasoning left out: verdict of ${today} for strictp/strict-model`,
    );
    expect(await turns.nth(1).locator('[data-testid="replay"]').textContent()).toContain(
      "turn 2 sent upstream with the reasoning of turn 1 attached as reasoning_content; reasoning left out: the upstream rejected it on this turn",
    );
    expect(await turns.nth(0).locator('[data-testid="replay"]').textContent()).toContain("turn 1 sent upstream with no earlier reasoning");
    expect(await turns.nth(0).locator('[data-testid="stored-reasoning"]').textContent()).toBe(tripReasoning);
    expect(await third.locator('[data-testid="stored-answer"]').textContent()).toMatch(/^Answer \d+ from strictp\.$/);
    const [reasoningBox, answerBox] = [
      await third.locator('[data-testid="stored-reasoning"]').boundingBox(),
      await third.locator('[data-testid="stored-answer"]').boundingBox(),
    ];
    expect(reasoningBox && answerBox && Math.abs(reasoningBox.y - answerBox.y) < 2 && answerBox.x > reasoningBox.x + 100).toBe(true);
    await shoot(page, context, "turn-view");

    // a small load with the page open: 15 answered, 5 refused by an overloaded upstream
    const load = [
      ...Array.from({ length: 15 }, (_, i) => ask(gateway, { model: "demo", stream: i % 2 === 0, messages: [{ role: "user", content: `load ${i}` }] })),
      ...Array.from({ length: 5 }, (_, i) => ask(gateway, { model: "broken/big-model", messages: [{ role: "user", content: `load ${i}` }] })),
    ];
    expect((await Promise.all(load)).map((turn) => turn.status).sort()).toEqual([...Array(15).fill(200), ...Array(5).fill(503)]);

    await page.click("#show-providers");
    const demo = page.locator('#provider-cards [data-provider="demo"]');
    const broken = page.locator('#provider-cards [data-provider="broken"]');
    const strict = page.locator('#provider-cards [data-provider="strictp"]');
    await demo.waitFor();
    await expect.poll(() => demo.locator('[data-testid="requests"]').textContent()).toBe(`${DEMO_SESSIONS + 15} (${DEMO_SESSIONS + 15} completed, 0 failed)`);
    expect(await broken.locator('[data-testid="requests"]').textContent()).toBe("5 (0 completed, 5 failed)");
    expect(await broken.locator('[data-testid="errors"]').textContent()).toBe("upstream_error 503 ×5");
    expect(await strict.locator('[data-testid="verdicts"]').textContent()).toBe("1");
    expect(await strict.locator('[data-testid="requests"]').textContent()).toBe("3 (3 completed, 0 failed)");
    // the page shows what the endpoint says
    const snapshot = ((await (await gateway.fetch("/v1/stats/providers?window=5m")).json()) as { windows: WindowSnapshot[] }).windows[0]!;
    const demoStats = snapshot.providers.find((entry) => entry.provider === "demo")!;
    expect(await demo.locator('[data-testid="tokens"]').textContent()).toBe(
      `${demoStats.tokens.input.toLocaleString("en-US")} in · ${demoStats.tokens.output.toLocaleString("en-US")} out`,
    );
    expect(demoStats.tokens.output).toBeGreaterThan(0);
    expect(await demo.locator('[data-testid="completion"]').textContent()).toMatch(/^p50 (<1 ms|\d+ ms|[\d.]+ s) · p95 (<1 ms|\d+ ms|[\d.]+ s)$/);
    expect(await demo.locator('[data-testid="first-reasoning"]').textContent()).toMatch(/^p50 (<1 ms|\d+ ms|[\d.]+ s) · p95/);
    // uPlot drew a chart per model
    expect(await demo.locator(".chart canvas").count()).toBe(1);
    await shoot(page, context, "providers");
    await page.click('[data-window="24h"]');
    await expect.poll(() => page.textContent("#reloads")).toContain("last 24h");
    expect(await demo.locator('[data-testid="requests"]').textContent()).toContain(`${DEMO_SESSIONS + 15} (`);
    await shoot(page, context, "providers-24h");
    await page.emulateMedia({ colorScheme: "dark" });
    await shoot(page, context, "providers-dark");

    // live updates still arrive: a turn streamed now tops the sessions list by itself, and shows on the live tab
    await page.emulateMedia({ colorScheme: "light" });
    await page.click("#show-sessions");
    await page.fill("#search", "");
    await page.click("#search-button");
    await expect.poll(() => rows.count()).toBe(15);
    const live = ask(gateway, { model: "demo", stream: true, messages: [{ role: "user", content: "live one" }] }, { "x-session-id": "live-now" });
    await expect.poll(() => rows.first().getAttribute("data-session-id"), { timeout: 5000 }).toBe("live-now");
    expect((await live).status).toBe(200);
    await page.click("#show-live");
    await page.locator('[data-session="live-now"] .badge[data-state="completed"]').waitFor();
    // the refused requests of the load are in the live log, with their provider, code and status
    expect(await page.locator('[data-testid="log"] .entry', { hasText: "Upstream failed" }).count()).toBe(5);
    expect(await page.locator('[data-testid="log"] .entry', { hasText: "Upstream failed" }).first().textContent()).toContain(
      "broken / big-model: upstream_error 503",
    );
    await shoot(page, context, "live");
    console.log(`dashboard screenshots: ${shots}`);
    // the page's own requests never failed (the load's 503s were the test's, not the page's)
    expect(problems).toEqual([]);
  },
  120_000,
);
