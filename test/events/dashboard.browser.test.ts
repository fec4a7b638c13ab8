import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { launchChromium, SKIP_BROWSER } from "../support/browser.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * End to end in a real browser: Debian's Chromium (test/support/browser.ts installs it when missing)
 * driven by playwright-core. Set CARRIERD_SKIP_BROWSER=1 to skip on purpose;
 * a missing Chromium otherwise fails, so this test never passes unchecked.
 */
const skip = SKIP_BROWSER;
// paced, so reasoning is on screen before the answer starts
const PACED_ROUTES = DEMO_ROUTES.replace("model: demo-reasoner }", "model: demo-reasoner, params: { delay_ms: 25 } }");

let gateway: TestGateway;
let browser: Browser;
beforeAll(async () => {
  if (skip) return;
  gateway = await startTestGateway({ routes: PACED_ROUTES });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

test.skipIf(skip)(
  "the dashboard asks for the key, then shows reasoning streaming and then the answer",
  async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    const response = await page.goto(`${gateway.url}/dashboard`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");

    // a wrong key is refused and the page asks again
    await page.fill("#key", "not-the-key");
    await page.click("#connect");
    await page.waitForSelector("#gate:not([hidden])");
    await expect.poll(() => page.textContent("#problem")).toContain("refused");

    await page.fill("#key", gateway.key);
    await page.click("#connect");
    await page.waitForFunction(() => document.getElementById("status-text")?.textContent === "live");
    expect(await page.evaluate(() => sessionStorage.getItem("carrierd.key"))).toBe(gateway.key);
    await page.click("#show-live");

    const request = gateway.post(
      "/v1/chat/completions",
      { model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+3?" }] },
      { "x-session-id": "browser-session" },
    );
    const other = gateway.post(
      "/v1/chat/completions",
      { model: "demo", stream: true, messages: [{ role: "user", content: "Name a colour of the sky." }] },
      { "x-session-id": "browser-other" },
    );
    const card = page.locator('[data-session="browser-session"]');
    // reasoning shows up while the answer is still empty
    await card.locator('[data-testid="reasoning"]', { hasText: "Step 1" }).waitFor();
    const answerWhileReasoning = await card.locator('[data-testid="answer"]').textContent();
    expect(answerWhileReasoning).toBe("");
    await card.locator('[data-testid="answer"]', { hasText: "The answer is 5." }).waitFor();
    await card.locator('.badge[data-state="completed"]').waitFor();
    const sse = await readSse(await request);
    expect(sse.done).toBe(true);
    await readSse(await other);

    // sessions sit side by side
    const second = page.locator('[data-session="browser-other"]');
    await second.locator('.badge[data-state="completed"]').waitFor();
    const [a, b] = [await card.boundingBox(), await second.boundingBox()];
    expect(a && b && Math.abs(a.y - b.y) < 2 && Math.abs(a.x - b.x) > 100).toBe(true);

    const reasoning = await card.locator('[data-testid="reasoning"]').textContent();
    expect(reasoning).toContain("Step 3: write the answer.");
    expect(await card.locator(".usage").textContent()).toMatch(/\d+ prompt · \d+ completion · \d+ reasoning · finish: stop/);
    expect(await card.locator(".meta").textContent()).toContain("reasoning_content");

    // a routes.yaml reload lands in the log
    await gateway.reloadRoutes(); // same file, same revision: nothing to log
    const { writeFileSync } = await import("node:fs");
    writeFileSync(gateway.routesPath, `${PACED_ROUTES}# edited\n`);
    await page.locator('[data-testid="log"] .entry', { hasText: "Routes reloaded" }).waitFor();

    const shots = mkdtempSync(join(tmpdir(), "carrierd-dashboard-"));
    await page.screenshot({ path: join(shots, "dashboard.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(shots, "dashboard-dark.png"), fullPage: true });
    console.log(`dashboard screenshots: ${shots}`);
    expect(problems.filter((text) => !/401|4401|WebSocket/.test(text))).toEqual([]);
  },
  60_000,
);
