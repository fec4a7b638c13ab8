import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, expect, test } from "vitest";
import { EventBus } from "../../src/foundation/event-bus/event-bus.js";
import { loadRoutesFile } from "../../src/routing/routes/load-routes.js";
import { RouteSource } from "../../src/routing/routes/route-source.js";

const PLUGINS = new Set(["demo"]);
const routes = (model: string) => `version: 1\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: ${model}, provider: demo }\n`;

let folder: string;
afterEach(() => rmSync(folder, { recursive: true, force: true }));

async function sourceFor(text: string) {
  folder = mkdtempSync(join(tmpdir(), "carrierd-source-"));
  const file = join(folder, "routes.yaml");
  writeFileSync(file, text);
  const loaded = await loadRoutesFile(file, { knownPlugins: PLUGINS });
  if (!loaded.ok) throw new Error("fixture does not load");
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
      done();
    },
  });
  return { file, lines, source: new RouteSource(loaded.table, PLUGINS, new EventBus(), pino({ level: "info" }, sink)) };
}

test("a reload listener that throws is logged; the table still swaps and later reloads still run", async () => {
  const { file, lines, source } = await sourceFor(routes("one"));
  source.onReload(() => {
    throw new Error("listener exploded");
  });
  writeFileSync(file, routes("two"));
  await source.reload("test");
  expect(source.current.resolveModel("two")).toBeDefined();
  expect(lines.some((line) => line.msg === "a routes.reloaded listener failed")).toBe(true);
  writeFileSync(file, routes("three"));
  await source.reload("test");
  expect(source.current.resolveModel("three")).toBeDefined();
});

test("an explicit reload of a file that cannot be read keeps the table and reports it", async () => {
  const { file, lines, source } = await sourceFor(routes("one"));
  rmSync(file);
  await source.reload("SIGHUP");
  expect(source.current.resolveModel("one")).toBeDefined();
  expect(String(lines.find((line) => line.level === 50)?.msg)).toMatch(/routes rejected, keeping revision [0-9a-f]{12}: .*routes\.yaml:1:1: cannot read/);
});
