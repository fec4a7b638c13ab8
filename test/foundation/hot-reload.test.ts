import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, expect, test } from "vitest";
import { revisionOf } from "../../src/routing/routes/load-routes.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { nextEvent } from "./bus-events.js";
import { chunkDeltas, type Chunk } from "./sse-chunks.js";

/** The gateway's log lines, parsed, so the tests can read what an operator would see. */
const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString("utf8").split("\n")) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES, log: pino({ level: "info" }, logSink) });
});
afterAll(() => gateway.stop());

function routesWith(...models: string[]): string {
  return `version: 1
providers:
  demo: { plugin: demo }
models:
${models.map((line) => `  - ${line}`).join("\n")}
`;
}

async function modelIds(): Promise<string[]> {
  const body = (await (await gateway.fetch("/v1/models")).json()) as { data: { id: string }[] };
  return body.data.map((model) => model.id);
}

function ask(model: string, stream = false): Promise<Response> {
  return gateway.post("/v1/chat/completions", { model, stream, messages: [{ role: "user", content: "What is 1+1?" }] });
}

test("an added model is in force for the next request within a second of the save", async () => {
  const reloaded = nextEvent(gateway, "routes.reloaded");
  const saved = performance.now();
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: demo-2, provider: demo }"));
  const event = await reloaded;
  expect(performance.now() - saved).toBeLessThan(1000);
  expect(event.revision).toMatch(/^[0-9a-f]{12}$/);
  expect(await modelIds()).toEqual(["demo", "demo-2"]);
  expect((await ask("demo-2")).status).toBe(200);
});

test("a broken file is rejected whole: the last good table stays and the error names line and column", async () => {
  const before = await modelIds();
  const rejected = nextEvent(gateway, "routes.rejected");
  // line 6: the model entry has a misspelt key, reported at the key itself
  writeFileSync(
    gateway.routesPath,
    routesWith("{ name: demo, provider: demo }", "{ name: demo-3, provider: demo, temprature: 1 }", "{ name: demo-4, provider: nowhere }"),
  );
  const event = (await rejected) as unknown as { errors: { file: string; line: number; column: number; message: string }[]; revision_in_force: string };
  expect(event.errors[0]).toMatchObject({ file: gateway.routesPath, line: 6, column: 37 });
  expect(event.errors[0]!.message).toContain('unknown key "temprature"');
  expect(await modelIds()).toEqual(before);
  expect((await ask("demo-3")).status).toBe(404);
  expect((await ask("demo-2")).status).toBe(200);
  const logged = logLines.find((line) => line.level === 50 && String(line.msg).startsWith("routes rejected"));
  expect(String(logged?.msg)).toContain(`${gateway.routesPath}:6:37:`);
});

test("a YAML syntax error is rejected with its position too", async () => {
  const rejected = nextEvent(gateway, "routes.rejected");
  writeFileSync(gateway.routesPath, "version: 1\nproviders:\n  demo: { plugin: demo\nmodels: []\n");
  const event = (await rejected) as unknown as { errors: { line: number; column: number }[] };
  expect(event.errors[0]!.line).toBeGreaterThanOrEqual(3);
  expect(event.errors[0]!.column).toBeGreaterThan(0);
  expect(await modelIds()).toEqual(["demo", "demo-2"]);
});

test("fixing the file brings the fix in force", async () => {
  const reloaded = nextEvent(gateway, "routes.reloaded");
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: demo-3, provider: demo }"));
  await reloaded;
  expect(await modelIds()).toEqual(["demo", "demo-3"]);
});

test("an editor that saves by writing a temp file and renaming it is followed", async () => {
  const reloaded = nextEvent(gateway, "routes.reloaded");
  writeFileSync(`${gateway.routesPath}.tmp`, routesWith("{ name: demo, provider: demo }", "{ name: renamed, provider: demo }"));
  renameSync(`${gateway.routesPath}.tmp`, gateway.routesPath);
  await reloaded;
  expect(await modelIds()).toEqual(["demo", "renamed"]);
});

test("of two saves in quick succession the last one is in force", async () => {
  const last = routesWith("{ name: demo, provider: demo }", "{ name: second-save, provider: demo }");
  const reloaded = nextEvent(gateway, "routes.reloaded", (event) => event.revision === revisionOf(last));
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: first-save, provider: demo }"));
  writeFileSync(gateway.routesPath, last);
  await reloaded;
  expect(await modelIds()).toEqual(["demo", "second-save"]);
});

test("a Kubernetes ConfigMap update (an atomic swap of the ..data symlink beside the file) is followed", async () => {
  // the layout kubelet mounts: routes.yaml → ..data/routes.yaml, ..data → ..<timestamp>
  const folder = dirname(gateway.routesPath);
  const version = (name: string, text: string) => {
    mkdirSync(join(folder, name));
    writeFileSync(join(folder, name, "routes.yaml"), text);
  };
  const current = readFileSync(gateway.routesPath, "utf8");
  version("..v1", current);
  symlinkSync("..v1", join(folder, "..data"));
  symlinkSync(join("..data", "routes.yaml"), `${gateway.routesPath}.link`);
  renameSync(`${gateway.routesPath}.link`, gateway.routesPath);

  const next = routesWith("{ name: demo, provider: demo }", "{ name: from-configmap, provider: demo }");
  const reloaded = nextEvent(gateway, "routes.reloaded", (event) => event.revision === revisionOf(next));
  version("..v2", next);
  symlinkSync("..v2", join(folder, "..data_tmp"));
  renameSync(join(folder, "..data_tmp"), join(folder, "..data"));
  await reloaded;
  expect(await modelIds()).toEqual(["demo", "from-configmap"]);

  // back to a plain file for the tests that follow
  rmSync(gateway.routesPath);
  writeFileSync(gateway.routesPath, next);
});

test("reloadRoutes (what SIGHUP calls) puts the file in force when it resolves", async () => {
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: via-sighup, provider: demo }"));
  await gateway.reloadRoutes();
  expect(await modelIds()).toEqual(["demo", "via-sighup"]);
});

test("a request in flight finishes on the table it started with", async () => {
  const reloaded = nextEvent(gateway, "routes.reloaded");
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: slow, provider: demo, params: { delay_ms: 15 } }"));
  await reloaded;
  const response = await ask("slow", true);
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const first = await reader.read(); // the stream has started on the old table
  expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');

  const removed = nextEvent(gateway, "routes.reloaded");
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }"));
  await removed;
  expect((await ask("slow")).status).toBe(404);

  let rest = new TextDecoder().decode(first.value);
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
  const { events, done } = await readSse(new Response(rest));
  expect(done).toBe(true);
  const summary = chunkDeltas(events as Chunk[]);
  expect(summary.reasoning).toContain("Step 3");
  expect(summary.content).toBe("(simulated) The answer is 2.");
});

test("routes.yaml beside state.db: a save is in force within a second while every request writes the database", async () => {
  expect(dirname(gateway.routesPath)).toBe(gateway.home); // the harness keeps both in the gateway's home
  let writing = true;
  let writesGoing!: () => void;
  const going = new Promise<void>((resolve) => (writesGoing = resolve));
  const traffic = (async () => {
    let requests = 0;
    while (writing) {
      expect((await ask("demo")).status).toBe(200); // each completed turn is a SQLite commit in the watched folder
      if (++requests === 3) writesGoing();
    }
    return requests;
  })();
  await going; // the database is being written when the save lands
  const reloaded = nextEvent(gateway, "routes.reloaded", () => true, 1000);
  writeFileSync(gateway.routesPath, routesWith("{ name: demo, provider: demo }", "{ name: demo-busy, provider: demo }"));
  await reloaded;
  writing = false;
  expect(await traffic).toBeGreaterThan(0);
  expect(await modelIds()).toContain("demo-busy");
});
