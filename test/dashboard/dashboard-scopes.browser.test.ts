import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, test, type TestContext } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import type { OpenAIUpstream } from "../support/openai-upstream.js";
import { addKey, bearer } from "../keys/keys-support.js";
import { dashboardRoutes, startDashboardUpstreams } from "./dashboard-upstreams.js";

/**
 * The dashboard with access keys of one scope each, in Debian's Chromium
 * driven by playwright-core (as dashboard.browser.test.ts): every panel works
 * for the key that may read it, and each other panel says which scope it
 * lacks while the key stays. A chat key's sessions that begin alike are told
 * apart in their rows (the id's end, model, turns, when they started); a turn
 * names its carriers route by what routes.yaml says of it, not its position.
 */
const CHROMIUM = process.env.CARRIERD_CHROMIUM ?? "/usr/bin/chromium";
const skip = process.env.CARRIERD_SKIP_BROWSER === "1";
const SAME_WORDS = "Plan a three-day trip to Lisbon for me";
const PREFIX = "claude-code-7f3a1c2e-9d4b-4c1a-8e77-";

let upstream: OpenAIUpstream;
let gateway: TestGateway;
let browser: Browser;
const keys = { chat: "", events: "", admin: "" };
const shots = mkdtempSync(join(tmpdir(), "carrierd-dashboard-scopes-"));

async function chat(key: string, model: string, messages: { role: string; content: string }[], session: string) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json", "x-session-id": session },
    body: JSON.stringify({ model, messages }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
}

beforeAll(async () => {
  if (skip) return;
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or CARRIERD_SKIP_BROWSER=1)`);
  upstream = await startDashboardUpstreams();
  gateway = await startTestGateway({ routes: dashboardRoutes(upstream) });
  keys.chat = await addKey(gateway, "laptop", { scopes: ["chat"] });
  keys.events = await addKey(gateway, "wall", { scopes: ["events"], eventsOf: ["laptop"] });
  keys.admin = await addKey(gateway, "grafana", { scopes: ["admin"] });
  // three sessions of the chat key that begin with the same words, their ids one long shared prefix
  await chat(keys.chat, "demo", [{ role: "user", content: SAME_WORDS }], `${PREFIX}0001`);
  const first = [{ role: "user", content: SAME_WORDS }];
  const answer = await chat(keys.chat, "demo", first, `${PREFIX}0002`);
  await chat(keys.chat, "demo", [...first, { role: "assistant", content: answer }, { role: "user", content: "And day two?" }], `${PREFIX}0002`);
  await chat(keys.chat, "strictp/strict-model", [{ role: "user", content: SAME_WORDS }], `${PREFIX}0003`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
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

/** The page opened with `key`; every console error and page error it raises is collected. */
async function openWith(key: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  expect((await page.goto(`${gateway.url}/dashboard`))?.status()).toBe(200);
  await page.fill("#key", key);
  await page.click("#connect");
  return { page, problems };
}

const lacks = (scope: string) => `This key lacks the ${scope} scope this panel needs`;

test.skipIf(skip)("a chat-only key: its sessions told apart, live and providers each say the scope they lack, the key stays", async (context) => {
  const { page } = await openWith(keys.chat);
  const rows = page.locator("#session-rows tr");
  await expect.poll(() => rows.count()).toBe(3);
  // the WebSocket was refused (4403): the live panel says so, and neither the key prompt nor a lost key follows
  await expect.poll(() => page.textContent("#status-text")).toBe("no events scope");
  expect(await page.isHidden("#gate")).toBe(true);
  expect(await page.evaluate(() => sessionStorage.getItem("carrierd.key"))).toBe(keys.chat);
  expect(await page.textContent("#live-problem")).toContain(lacks("events"));

  // rows that begin alike differ in what the row shows: the id's end, model, turns, when it started
  const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
  expect(new Set(cells.map((row) => row[1])).size).toBe(1); // the same first words…
  expect(new Set(cells.map((row) => row[0])).size).toBe(3); // …told apart by the id's end
  for (const row of cells) expect(row[0]).toMatch(/^….{9}$/);
  for (const row of cells) expect(row[0]).toMatch(/000[123]$/);
  const byId = Object.fromEntries(cells.map((row) => [row[0].slice(-4), row]));
  expect(byId["0003"]![2]).toContain("strictp/strict-model");
  expect(byId["0003"]![2]).toContain("via strictp");
  expect(byId["0002"]![2]).toContain("demo");
  expect([byId["0001"]![3], byId["0002"]![3], byId["0003"]![3]]).toEqual(["1", "2", "1"]);
  for (const row of cells) expect(row[4]).not.toBe("–"); // started
  expect(new Set(cells.map((row) => row.join("|"))).size).toBe(3);
  // and the cells that tell them apart are shown whole, not cut by the column's width
  const clipped = await rows.evaluateAll((trs) =>
    trs.flatMap((tr) =>
      [0, 2, 3, 4, 5]
        .map((i) => tr.querySelectorAll("td")[i]!)
        .filter((td) => td.scrollWidth > td.clientWidth)
        .map((td) => td.textContent),
    ),
  );
  expect(clipped).toEqual([]);
  expect(await rows.first().locator("td").first().getAttribute("title")).toMatch(new RegExp(`^${PREFIX}000[123]$`));

  // a stored turn names its route by the match routes.yaml wrote
  await page.click(`#session-rows [data-session-id="${PREFIX}0003"]`);
  await page.locator("#turn-view .stored-turn").waitFor();
  expect(await page.locator("#turn-view .stored-turn .route").textContent()).toBe("carriers for provider strictp");
  await page.click(`#session-rows [data-session-id="${PREFIX}0001"]`);
  await expect.poll(() => page.locator("#turn-view .stored-turn .route").first().textContent()).toBe("carriers for every model");
  await shoot(page, context, "chat-key-sessions");

  await page.click("#show-providers");
  await expect.poll(() => page.textContent("#providers-problem")).toContain(lacks("admin"));
  await page.click("#show-live");
  expect(await page.isVisible("#live-problem")).toBe(true);
  await shoot(page, context, "chat-key-live");
  // still the chat key's page after every panel was visited
  expect(await page.evaluate(() => sessionStorage.getItem("carrierd.key"))).toBe(keys.chat);
  await page.close();
});

test.skipIf(skip)("an events-only key: live turns with their route named; sessions and providers say the scope they lack", async (context) => {
  const { page } = await openWith(keys.events);
  await page.waitForFunction(() => document.getElementById("status-text")?.textContent === "live");
  await expect.poll(() => page.textContent("#history-problem")).toContain(lacks("chat"));
  expect(await page.locator("#session-rows tr").count()).toBe(0);
  await page.click("#show-live");
  await chat(keys.chat, "strictp/strict-model", [{ role: "user", content: "live one" }], "live-strict");
  await chat(keys.chat, "demo", [{ role: "user", content: "live two" }], "live-demo");
  const strict = page.locator('[data-session="live-strict"]');
  await strict.locator('.badge[data-state="completed"]').waitFor();
  expect(await strict.locator(".meta").textContent()).toContain("carriers for provider strictp");
  expect(await strict.locator(".meta").textContent()).not.toMatch(/route \d/);
  const demo = page.locator('[data-session="live-demo"]');
  await demo.locator('.badge[data-state="completed"]').waitFor();
  expect(await demo.locator(".meta").textContent()).toContain("carriers for every model");
  expect(await page.textContent("#live-problem")).toBe("");
  await shoot(page, context, "events-key-live");
  await page.click("#show-providers");
  await expect.poll(() => page.textContent("#providers-problem")).toContain(lacks("admin"));
  expect(await page.evaluate(() => sessionStorage.getItem("carrierd.key"))).toBe(keys.events);
  await page.close();
});

test.skipIf(skip)("an admin key: the provider panel; sessions and live say the scope they lack", async (context) => {
  const { page } = await openWith(keys.admin);
  await expect.poll(() => page.textContent("#status-text")).toBe("no events scope");
  await expect.poll(() => page.textContent("#history-problem")).toContain(lacks("chat"));
  await page.click("#show-providers");
  await page.locator('#provider-cards [data-provider="demo"]').waitFor();
  expect(await page.textContent("#providers-problem")).toBe("");
  await shoot(page, context, "admin-key-providers");
  await page.click("#show-live");
  expect(await page.textContent("#live-problem")).toContain(lacks("events"));
  expect(await page.isHidden("#gate")).toBe(true);
  expect(await page.evaluate(() => sessionStorage.getItem("carrierd.key"))).toBe(keys.admin);
  await page.close();
});
