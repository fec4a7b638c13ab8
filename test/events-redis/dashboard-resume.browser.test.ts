import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { launchChromium, SKIP_BROWSER } from "../support/browser.js";
import type { TestGateway } from "../support/gateway.js";
import { startRedisGateway, streamedTurn } from "./redis-gateways.js";
import { REDIS_URL, testRedis } from "./redis-for-tests.js";

// Debian's Chromium driven by playwright-core, as in test/events/dashboard.browser.test.ts
const skipBrowser = SKIP_BROWSER;
const redis = await testRedis("test/events-redis/dashboard-resume.browser.test.ts", REDIS_URL, skipBrowser ? "CARRIERD_SKIP_BROWSER=1" : undefined);

let a: TestGateway;
let b: TestGateway;
let browser: Browser;
beforeAll(async () => {
  if (!redis.available) return;
  a = await startRedisGateway(REDIS_URL, redis.stream("dashboard"));
  b = await startRedisGateway(REDIS_URL, redis.stream("dashboard"));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await a?.stop();
  await b?.stop();
});

redis.test(
  "the dashboard on B shows a turn that ran on A while it was disconnected, once it reconnects, and nothing twice",
  async () => {
    const page = await browser.newPage();
    await page.goto(`${b.url}/dashboard`);
    await page.fill("#key", b.key);
    await page.click("#connect");
    await page.waitForFunction(() => document.getElementById("status-text")?.textContent === "live");
    await page.click("#show-live");
    await streamedTurn(a, "dash-before");
    await page.locator('[data-session="dash-before"] .badge[data-state="completed"]').waitFor();

    // the page loses its connection and cannot come back until it is given the key again
    // (an expression string: the page's scripts are not this test's modules)
    await page.evaluate('sessionStorage.removeItem("carrierd.key"); Dash.live.dropConnection();');
    await page.waitForSelector("#gate:not([hidden])");
    await streamedTurn(a, "dash-while-away");

    await page.fill("#key", b.key);
    await page.click("#connect");
    const missed = page.locator('[data-session="dash-while-away"]');
    await missed.locator('[data-testid="answer"]', { hasText: "The answer is 5." }).waitFor();
    await missed.locator('.badge[data-state="completed"]').waitFor();
    expect(await missed.locator("[data-turn]").count()).toBe(1);
    expect(await page.locator('[data-session="dash-before"] [data-turn]').count()).toBe(1);
    expect(await page.locator('[data-testid="log"] .entry', { hasText: "Events missing" }).count()).toBe(0);
  },
  60_000,
);
