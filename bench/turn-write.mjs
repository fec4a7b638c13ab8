// What storing a turn costs the gateway, alone (not the suite): two builds'
// SQLite storage, opened as the gateway opens it (journal, group commit),
// each saving the first turns of new agent sessions, their prompts as the
// workload's first request asks (bench/agent-workloads.mjs), in child
// processes pinned to core 0 and alternating A B, B A, … Prints CPU per
// stored turn (user + system, the whole child). How prompt heads stored
// once were measured (docs/performance.md#prompt-heads-stored-once).
//   node bench/turn-write.mjs CHECKOUT_A CHECKOUT_B [rounds]
// WORKLOAD (opencode) and TURNS_PER_RUN (3000) change the runs; SYSTEM_PARTS=1
// gives claude-code's system message as text parts (an Anthropic route's).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { WORKLOADS } from "./agent-workloads.mjs";
import { median } from "./load.mjs";

const self = fileURLToPath(import.meta.url);
const WARM_UP = 300;

/**
 * The workload's first request as chat messages: the prompt its first turn
 * is stored with (Responses input items made messages; a Messages request's
 * system blocks made its system message, as src/ingress/messages converts
 * them: one text for an OpenAI-style route, or with SYSTEM_PARTS=1 the
 * text parts with their cache_control, as an Anthropic route gets them).
 */
function firstPrompt(name) {
  const body = WORKLOADS[name].body(0, { model: "bench", stream: false });
  if (Array.isArray(body.system)) {
    const content = process.env.SYSTEM_PARTS
      ? body.system.map((block) => ({ type: "text", text: block.text, ...(block.cache_control === undefined ? {} : { cache_control: block.cache_control }) }))
      : body.system.map((block) => block.text).join("\n\n");
    return [{ role: "system", content }, ...body.messages];
  }
  if (body.messages) return body.messages;
  const text = (content) => (typeof content === "string" ? content : content.map((part) => part.text ?? "").join(""));
  return body.input.map((item) => ({ role: item.role, content: text(item.content) }));
}

async function child(checkout, name, turns) {
  const { openSqliteStorage } = await import(pathToFileURL(join(checkout, "dist/src/storage/sqlite/open-sqlite-storage.js")).href);
  const quiet = { warn() {}, error() {}, info() {}, debug() {}, child: () => quiet };
  const home = mkdtempSync(join(tmpdir(), "carrierd-turn-write-"));
  const storage = openSqliteStorage({ home, gateway: { log: quiet } });
  const prompt = firstPrompt(name);
  let n = 0;
  const save = async () => {
    n++;
    // each turn a new session's first, its prompt parsed anew as each request's is
    await storage.turns.save({
      id: `turn_bench_${n}`,
      sessionId: `sess_bench_${n}`,
      keyHash: "bench",
      parentTurnId: undefined,
      model: "bench",
      plugin: "openai-compatible",
      provider: "bench",
      host: "127.0.0.1",
      upstreamModel: "bench",
      prompt: JSON.parse(JSON.stringify(prompt)),
      content: "",
      toolCalls: [{ id: `call_${n}`, type: "function", function: { name: "read", arguments: '{"path":"src/a.ts"}' } }],
      reasoningText: "Step 1: read the file. Step 2: answer.",
      reasoningDetails: undefined,
      nativeRecord: undefined,
      usage: { prompt_tokens: 9000, completion_tokens: 60, total_tokens: 9060 },
      finishReason: "tool_calls",
      upstreamId: `up_${n}`,
      fingerprint: `fp_${n}`,
    });
    // the next request arrives after this answer, as at c=1
    await new Promise((done) => setImmediate(done));
  };
  for (let i = 0; i < WARM_UP; i++) await save();
  await storage.committed();
  const before = process.cpuUsage();
  for (let i = 0; i < turns; i++) await save();
  await storage.committed();
  const used = process.cpuUsage(before);
  // not closed: the process ends once it has answered (closing waits for the background checkpoint's worker)
  rmSync(home, { recursive: true, force: true });
  // the copy of the prompt each save parses is the request's, not the store's: measured alone and left out
  const parseBefore = process.cpuUsage();
  for (let i = 0; i < turns; i++) JSON.parse(JSON.stringify(prompt));
  const parse = process.cpuUsage(parseBefore);
  const us = (usage) => usage.user + usage.system;
  process.stdout.write(JSON.stringify({ us: (us(used) - us(parse)) / turns }));
  process.exit(0);
}

if (process.argv[2] === "--child") {
  await child(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  const [a, b, roundsText = "6"] = process.argv.slice(2);
  if (!a || !b) {
    console.error("usage: node bench/turn-write.mjs CHECKOUT_A CHECKOUT_B [rounds]");
    process.exit(2);
  }
  const name = process.env.WORKLOAD ?? "opencode";
  const turns = String(Number(process.env.TURNS_PER_RUN ?? 3000));
  const sides = [
    { name: "A", checkout: resolve(a), runs: [] },
    { name: "B", checkout: resolve(b), runs: [] },
  ];
  for (let round = 0; round < Number(roundsText); round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const out = execFileSync("taskset", ["-c", "0", process.execPath, self, "--child", side.checkout, name, turns], { encoding: "utf8" });
      side.runs.push(JSON.parse(out).us);
    }
  }
  for (const side of sides) {
    console.log(`${side.name} ${name}: CPU ${median(side.runs).toFixed(1)} µs a stored first turn [${side.runs.map((us) => us.toFixed(1)).join(" ")}]`);
  }
  const ratios = sides[0].runs.map((us, i) => sides[1].runs[i] / us);
  console.log(`B/A per round: ${ratios.map((ratio) => ratio.toFixed(2)).join(" ")} (median ${median(ratios).toFixed(2)})`);
}
