import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { MAX_ROUTES_BYTES } from "../../src/routing/routes/read-routes-file.js";
import { nextEvent } from "../foundation/bus-events.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * Whatever ends up at the routes path, the gateway rejects it as a table,
 * keeps the one in force, keeps answering, and follows the next good save.
 * Each test leaves a plain, good file behind with a model of its own.
 */
let gateway: TestGateway;
let folder: string;
let generation = 0;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
  folder = dirname(gateway.routesPath);
});
afterAll(() => gateway.stop());

const routesWith = (model: string) =>
  `version: 1\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: demo, provider: demo }\n  - { name: ${model}, provider: demo }\n`;

async function modelIds(): Promise<string[]> {
  const body = (await (await gateway.fetch("/v1/models")).json()) as { data: { id: string }[] };
  return body.data.map((model) => model.id);
}

/** Replaces whatever is at the path with `make()`, expects a rejection whose message matches, and checks the old table still serves. */
async function expectRejected(make: () => void, message: RegExp): Promise<void> {
  const before = await modelIds();
  const rejected = nextEvent(gateway, "routes.rejected");
  rmSync(gateway.routesPath, { recursive: true, force: true });
  make();
  const event = (await rejected) as GatewayEvent & { errors: { message: string; line: number; column: number }[] };
  expect(event.errors[0]!.message).toMatch(message);
  expect(await modelIds()).toEqual(before);
  expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
}

/** Puts a good plain file back and waits until it is in force. */
async function restore(): Promise<void> {
  const model = `good-${++generation}`;
  const text = routesWith(model);
  const reloaded = nextEvent(gateway, "routes.reloaded");
  rmSync(gateway.routesPath, { recursive: true, force: true });
  writeFileSync(`${gateway.routesPath}.tmp`, text);
  renameSync(`${gateway.routesPath}.tmp`, gateway.routesPath);
  await reloaded;
  expect(await modelIds()).toContain(model);
}

test("a symlink loop at routes.yaml is a rejected table", async () => {
  await restore();
  await expectRejected(() => symlinkSync("routes.yaml", gateway.routesPath), /symlink loop/);
  await restore();
});

test("a symlink loop at ..data beside it (a ConfigMap mount gone wrong) is a rejected table, not a crash", async () => {
  await expectRejected(() => {
    symlinkSync("..data", join(folder, "..data"));
    symlinkSync(join("..data", "routes.yaml"), gateway.routesPath);
  }, /symlink loop/);
  rmSync(join(folder, "..data"));
  await restore();
});

test("a FIFO at the path is rejected at once and does not wedge later reloads", async () => {
  await expectRejected(() => execFileSync("mkfifo", [gateway.routesPath]), /FIFO/);
  await restore(); // the reload after it is in force: nothing is stuck on the FIFO's open
});

test("a directory at the path is a rejected table", async () => {
  await expectRejected(() => mkdirSync(gateway.routesPath), /directory/);
  await restore();
});

test("a device at the path is a rejected table (and is never read)", async () => {
  await expectRejected(() => symlinkSync("/dev/zero", gateway.routesPath), /character device/);
  await restore();
});

test("a deleted file is reported once it stays gone; the table stays", async () => {
  await expectRejected(() => undefined, /no such file/);
  await restore();
});

test("a file over the size cap is rejected without being read", async () => {
  const huge = routesWith("never-served") + `# ${"x".repeat(5 * 1024 * 1024)}\n`;
  expect(huge.length).toBeGreaterThan(MAX_ROUTES_BYTES);
  await expectRejected(() => writeFileSync(gateway.routesPath, huge), /larger than the 1048576-byte cap/);
  await restore();
});

test("an explicit reload (SIGHUP) of a FIFO returns at once and keeps the table", async () => {
  rmSync(gateway.routesPath);
  execFileSync("mkfifo", [gateway.routesPath]);
  const before = await modelIds();
  const started = performance.now();
  await gateway.reloadRoutes();
  expect(performance.now() - started).toBeLessThan(1000);
  expect(await modelIds()).toEqual(before);
  await restore();
});
