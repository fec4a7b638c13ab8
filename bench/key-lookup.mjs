// What an access key costs a request, next to the owner key: one gateway,
// runs of each key interleaved (same host conditions), at one connection,
// each key resending a history its own turns built (so both replay alike).
// Then the lookup alone, in process: KeyRing.identify per call.
//   npx tsc -p tsconfig.json && node bench/key-lookup.mjs
//   RUNS=5 SECONDS_PER_RUN=3 MODES=json,stream node bench/key-lookup.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 5);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const work = mkdtempSync(join(tmpdir(), "carrierd-keys-bench-"));

const upstream = await startPinned(1, [here("./upstream.mjs")]);
const gateway = await startCarrierd(upstream.port, work);
try {
  // a few other keys, so the lookup is not of a one-entry map
  for (let i = 0; i < 20; i++)
    execFileSync(process.execPath, [here("../bin/carrierd"), "keys", "create", "--name", `other-${i}`, "--home", gateway.home], { stdio: "ignore" });
  const created = JSON.parse(
    execFileSync(process.execPath, [here("../bin/carrierd"), "keys", "create", "--name", "bench", "--json", "--home", gateway.home], { encoding: "utf8" }),
  );
  const keys = { owner: KEY, access: created.secret };
  // the gateway polls the store: the new key is in force within a poll
  for (let ready = false; !ready;)
    ready = (await fetch(`http://127.0.0.1:${gateway.port}/v1/models`, { headers: { authorization: `Bearer ${keys.access}` } })).ok;
  const histories = { owner: await buildHistory(gateway.port, 20, keys.owner), access: await buildHistory(gateway.port, 20, keys.access) };
  const url = `http://127.0.0.1:${gateway.port}/v1/chat/completions`;
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const bodies = {};
    for (const name of Object.keys(keys)) {
      bodies[name] = join(work, `${mode}-${name}.json`);
      writeFileSync(bodies[name], JSON.stringify({ model: "bench", stream: mode === "stream", messages: histories[name] }));
      await load({ url, connections: 1, seconds: 2, bodyFile: bodies[name], key: keys[name], core: 1 }); // warm-up
    }
    const runs = { owner: [], access: [] };
    for (let i = 0; i < RUNS; i++)
      for (const name of Object.keys(keys))
        runs[name].push(await load({ url, connections: 1, seconds: SECONDS, bodyFile: bodies[name], key: keys[name], core: 1 }));
    const p50 = (name) => median(runs[name].map((run) => run.p50));
    const rps = (name) => median(runs[name].map((run) => run.rps));
    console.log(
      `${mode} c=1: owner key p50 ${p50("owner").toFixed(3)} ms ${rps("owner").toFixed(0)} req/s | access key p50 ${p50("access").toFixed(3)} ms ${rps("access").toFixed(0)} req/s | Δp50 ${((p50("access") - p50("owner")) * 1000).toFixed(0)} µs`,
    );
  }
} finally {
  await stop(gateway);
  await stop(upstream);
}

// the lookup alone
const { KeyRing } = await import(here("../dist/src/http/keys/key-ring.js"));
const { openSqliteStorage } = await import(here("../dist/src/storage/sqlite/open-sqlite-storage.js"));
const { newDataScope, newSecret, secretHash } = await import(here("../dist/src/http/keys/secret.js"));
const storage = openSqliteStorage({ home: work, file: ":memory:" });
let secret = "";
for (let i = 0; i < 100; i++) {
  secret = newSecret();
  await storage.keys.update({
    create: {
      name: `k${i}`,
      secretHash: secretHash(secret),
      dataScope: newDataScope(),
      scopes: ["chat"],
      models: [],
      eventsOf: [],
      createdAt: Date.now(),
      expiresAt: null,
    },
  });
}
const quiet = { warn() {}, info() {}, debug() {}, error() {} };
const ring = new KeyRing(storage.keys, KEY, quiet, { pollMs: 60_000, flushMs: 60_000 });
await ring.start();
for (const [name, token] of [
  ["owner key", KEY],
  ["access key (100 in the ring)", secret],
  ["unknown key", "ck_unknown"],
]) {
  const calls = 500_000;
  for (let i = 0; i < 50_000; i++) ring.identify(token);
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) ring.identify(token);
  console.log(`identify, ${name}: ${(Number(process.hrtime.bigint() - started) / calls).toFixed(0)} ns per call`);
}
await ring.close();
await storage.close();
rmSync(work, { recursive: true, force: true });
