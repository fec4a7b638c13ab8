// The Messages API's cost against chat completions (issue 34's measure): the
// same carrierd, the same route (the bench upstream behind a must_echo
// route) and the same 20-turn history, asked through /v1/chat/completions
// and through /v1/messages; their runs interleaved so both see the same host
// conditions. CPU per request from /proc, steadier than req/s on a shared VM.
//   npm run bench:messages                    json and stream at c=1 and c=16, 3 runs each
//   MODES=stream CONNS=1 RUNS=5 npm run bench:messages
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 3);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const work = mkdtempSync(join(tmpdir(), "carrierd-messages-bench-"));

const upstream = await startPinned(1, [here("./upstream.mjs")]);
const gateway = await startCarrierd(upstream.port, work);
try {
  const chat = await buildHistory(gateway.port, Number(process.env.TURNS ?? 20));
  // the same conversation as a Messages client sends it: system apart, text blocks, max_tokens required
  const system = chat[0].content;
  const messages = chat.slice(1).map((message) => ({ role: message.role, content: message.content }));
  const rows = [];
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const stream = mode === "stream";
    const bodies = {
      chat: join(work, `chat-${mode}.json`),
      messages: join(work, `messages-${mode}.json`),
    };
    writeFileSync(bodies.chat, JSON.stringify({ model: "bench", stream, max_tokens: 1024, messages: chat }));
    writeFileSync(bodies.messages, JSON.stringify({ model: "bench", stream, max_tokens: 1024, system, messages }));
    const targets = [
      { name: "chat", url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`, bodyFile: bodies.chat },
      { name: "messages", url: `http://127.0.0.1:${gateway.port}/v1/messages`, bodyFile: bodies.messages },
    ];
    for (const connections of (process.env.CONNS ?? "1,16").split(",").map(Number)) {
      for (const target of targets) await load({ url: target.url, connections, seconds: 2, bodyFile: target.bodyFile, key: KEY, core: 1 }); // warm-up
      const runs = { chat: [], messages: [] };
      for (let i = 0; i < RUNS; i++) {
        for (const target of targets) {
          const before = await cpuMsOf(gateway.pid);
          const run = await load({ url: target.url, connections, seconds: SECONDS, bodyFile: target.bodyFile, key: KEY, core: 1 });
          run.cpuUs = (((await cpuMsOf(gateway.pid)) - before) * 1000) / (run.rps * SECONDS);
          runs[target.name].push(run);
        }
      }
      const of = (name, field) => median(runs[name].map((run) => run[field]));
      rows.push({
        mode,
        connections,
        chat_p50_ms: of("chat", "p50"),
        messages_p50_ms: of("messages", "p50"),
        chat_rps: Math.round(of("chat", "rps")),
        messages_rps: Math.round(of("messages", "rps")),
        chat_cpu_us: Math.round(of("chat", "cpuUs")),
        messages_cpu_us: Math.round(of("messages", "cpuUs")),
        p50_ratio: Number((of("messages", "p50") / of("chat", "p50")).toFixed(3)),
      });
    }
  }
  console.table(rows);
} finally {
  await stop(gateway);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}
