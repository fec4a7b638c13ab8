// The Gemini door's cost against chat completions: the same carrierd, the
// same route (the bench upstream behind a must_echo route) and the same
// 20-turn history, asked through /v1/chat/completions and through
// /v1beta/models/bench:generateContent (or :streamGenerateContent?alt=sse);
// their runs interleaved so both see the same host conditions. CPU per
// request from /proc, steadier than req/s on a shared VM.
//   npm run bench:gemini                      json and stream at c=1 and c=16, 3 runs each
//   MODES=stream CONNS=1 RUNS=5 npm run bench:gemini
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
const work = mkdtempSync(join(tmpdir(), "carrierd-gemini-bench-"));

const upstream = await startPinned(1, [here("./upstream.mjs")]);
const gateway = await startCarrierd(upstream.port, work);
try {
  const chat = await buildHistory(gateway.port, Number(process.env.TURNS ?? 20));
  // the same conversation as a Gemini client sends it: systemInstruction apart, model turns, text parts
  const systemInstruction = { role: "user", parts: [{ text: chat[0].content }] };
  const contents = chat.slice(1).map((message) => ({ role: message.role === "assistant" ? "model" : "user", parts: [{ text: message.content }] }));
  const rows = [];
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const stream = mode === "stream";
    const bodies = { chat: join(work, `chat-${mode}.json`), gemini: join(work, `gemini-${mode}.json`) };
    writeFileSync(bodies.chat, JSON.stringify({ model: "bench", stream, max_tokens: 1024, messages: chat }));
    writeFileSync(
      bodies.gemini,
      JSON.stringify({ contents, systemInstruction, generationConfig: { maxOutputTokens: 1024, thinkingConfig: { includeThoughts: true } } }),
    );
    const gemini = stream ? "bench:streamGenerateContent?alt=sse" : "bench:generateContent";
    const targets = [
      { name: "chat", url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`, bodyFile: bodies.chat },
      { name: "gemini", url: `http://127.0.0.1:${gateway.port}/v1beta/models/${gemini}`, bodyFile: bodies.gemini },
    ];
    for (const connections of (process.env.CONNS ?? "1,16").split(",").map(Number)) {
      for (const target of targets) await load({ url: target.url, connections, seconds: 2, bodyFile: target.bodyFile, key: KEY, core: 1 }); // warm-up
      const runs = { chat: [], gemini: [] };
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
        gemini_p50_ms: of("gemini", "p50"),
        chat_rps: Math.round(of("chat", "rps")),
        gemini_rps: Math.round(of("gemini", "rps")),
        chat_cpu_us: Math.round(of("chat", "cpuUs")),
        gemini_cpu_us: Math.round(of("gemini", "cpuUs")),
        cpu_ratio: Number((of("gemini", "cpuUs") / of("chat", "cpuUs")).toFixed(3)),
      });
    }
  }
  console.table(rows);
} finally {
  await stop(gateway);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}
