// CPU per request on pre-filled stores (bench:quick with PREFILL): for each
// size a fresh store (state.db, or with BENCH_STORE=postgres a database of
// its own) pre-filled with that many turns (prefill.mjs), the usual 20-turn
// history stored on it, then the load generator at each of CONNS for each of MODES. With
// REQUEST=repeated the history's answers are all the same text and the
// request names its session (X-Session-Id): its turns are placed by
// position, the read whose cost once grew with the store.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildHistory, KEY } from "./gateway.mjs";
import { startPrefilledCarrierd } from "./prefill.mjs";
import { backendCpuBetween, postgresForBench } from "./postgres-store.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export async function measurePrefilled(work, { sizes, runs, seconds }) {
  const postgres = process.env.BENCH_STORE === "postgres";
  const modes = (process.env.MODES ?? "json").split(",");
  const connections = (process.env.CONNS ?? "1").split(",").map(Number);
  const analyze = process.env.PREFILL_ANALYZE === "1";
  const keys = Number(process.env.PREFILL_KEYS ?? 100);
  const repeated = process.env.REQUEST === "repeated";
  const session = repeated ? "bench-repeated" : undefined;
  const upstream = await startPinned(1, [here("./upstream.mjs")]);
  try {
    for (const size of sizes) {
      const dir = join(work, `prefill-${size}`);
      const store = postgres ? await postgresForBench(undefined, `_${size}`) : undefined;
      if (store?.problem) throw new Error(store.problem);
      const env = store ? { CARRIERD_STORE: store.url } : {};
      const gateway = await startPrefilledCarrierd(upstream.port, dir, { turns: size, keys, env, analyze });
      try {
        const model = repeated ? "bench-repeat" : "bench";
        const messages = await buildHistory(gateway.port, Number(process.env.TURNS ?? 20), KEY, { model, session });
        for (const mode of modes) {
          const bodyFile = join(dir, `${mode}.json`);
          writeFileSync(bodyFile, JSON.stringify({ model, stream: mode === "stream", messages }));
          for (const conns of connections) {
            const url = `http://127.0.0.1:${gateway.port}/v1/chat/completions`;
            await load({ url, connections: conns, seconds: 2, bodyFile, key: KEY, core: 1, session }); // warm-up
            const measured = [];
            for (let i = 0; i < runs; i++) {
              const before = await cpuMsOf(gateway.pid);
              const dbBefore = store ? await store.backendCpu() : undefined;
              const run = await load({ url, connections: conns, seconds, bodyFile, key: KEY, core: 1, session });
              const requests = run.rps * seconds;
              run.cpuUs = (((await cpuMsOf(gateway.pid)) - before) * 1000) / requests;
              if (dbBefore) run.dbCpuUs = (backendCpuBetween(dbBefore, await store.backendCpu()) * 1000) / requests;
              measured.push(run);
            }
            const db = store ? `, database CPU ${median(measured.map((r) => r.dbCpuUs)).toFixed(0)} µs/req` : "";
            console.log(
              `${postgres ? "postgres" : "sqlite"} ${size.toLocaleString("en")} stored turns, ${repeated ? "repeated answers, " : ""}${mode} c=${conns}: p50 ${median(measured.map((r) => r.p50)).toFixed(3)} ms, ${median(measured.map((r) => r.rps)).toFixed(0)} req/s, gateway CPU ${median(measured.map((r) => r.cpuUs)).toFixed(0)} µs/req${db}`,
            );
          }
        }
      } finally {
        await stop(gateway);
        await store?.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await stop(upstream);
  }
}
