import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { revisionOf } from "../../src/routing/routes/load-routes.js";
import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import type { EventBus } from "../../src/foundation/event-bus/event-bus.js";
import { carrierd } from "../foundation/cli-process.js";
import { nextEvent } from "../foundation/bus-events.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

const ALIAS_BOMB = `version: 1
providers:
  demo: { plugin: demo }
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]
models: []
`;
const DEEP = `version: 1\nproviders:\n  demo: { plugin: demo, headers: ${"[".repeat(5000)}${"]".repeat(5000)} }\nmodels: []\n`;

test("a save caught half-written never goes live, even when its first half is a valid table", async () => {
  const firstHalf = `version: 1\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: demo, provider: demo }\n`;
  const whole = `${firstHalf}  - { name: after-the-cut, provider: demo }\n`;
  const bus = gateway.container.resolve<EventBus>(EVENT_BUS);
  const revisions: string[] = [];
  const unsubscribe = bus.subscribe((event) => {
    if (event.type === "routes.reloaded") revisions.push(String(event.revision));
  });
  try {
    const reloaded = nextEvent(gateway, "routes.reloaded", (event) => event.revision === revisionOf(whole), 3000);
    writeFileSync(gateway.routesPath, firstHalf); // in place, as an editor without atomic saves writes
    await new Promise((resolve) => setTimeout(resolve, 150)); // the writer pauses mid-save
    appendFileSync(gateway.routesPath, whole.slice(firstHalf.length));
    await reloaded;
    expect(revisions).not.toContain(revisionOf(firstHalf));
    expect((await gateway.post("/v1/chat/completions", { model: "after-the-cut", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
  } finally {
    unsubscribe();
  }
});

test("an alias bomb is rejected at its first alias, with file:line:col", async () => {
  const rejected = nextEvent(gateway, "routes.rejected");
  writeFileSync(gateway.routesPath, ALIAS_BOMB);
  const event = (await rejected) as GatewayEvent & { errors: { file: string; line: number; column: number; message: string }[] };
  expect(event.errors[0]).toMatchObject({ file: gateway.routesPath, line: 5, column: 8 });
  expect(event.errors[0]!.message).toMatch(/alias bomb/);
});

test("nesting thousands deep is rejected at the level past the limit, not with a stack overflow", async () => {
  const rejected = nextEvent(gateway, "routes.rejected");
  writeFileSync(gateway.routesPath, DEEP);
  const event = (await rejected) as GatewayEvent & { errors: { line: number; column: number; message: string }[] };
  // the 62nd "[" (column 34 + 61): the top map, providers, demo's map and 61 lists are the 64 levels allowed
  expect(event.errors[0]).toMatchObject({ line: 3, column: 95 });
  expect(event.errors[0]!.message).toBe("nested deeper than 64 levels");
});

test("`routes check` prints the same positions", async () => {
  const folder = mkdtempSync(join(tmpdir(), "carrierd-check-"));
  try {
    writeFileSync(join(folder, "bomb.yaml"), ALIAS_BOMB);
    writeFileSync(join(folder, "deep.yaml"), DEEP);
    const bomb = await carrierd(["routes", "check", join(folder, "bomb.yaml")]);
    expect(bomb.code).toBe(1);
    expect(bomb.stderr).toContain(`${join(folder, "bomb.yaml")}:5:8: aliases expand past 100 nodes`);
    const deep = await carrierd(["routes", "check", join(folder, "deep.yaml")]);
    expect(deep.code).toBe(1);
    expect(deep.stderr).toContain(`${join(folder, "deep.yaml")}:3:95: nested deeper than 64 levels`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
