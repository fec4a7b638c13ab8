// Replay lookup on long sessions (issue 3): what finding the session and
// attaching stored carriers costs per request when a stateless client resends
// a 1,000-turn history, against a 1-turn one. Uses the built daemon (dist/);
// run `npm run build` first, then `node bench/replay-lookup.mjs`.
import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attachStoredCarriers } from "../dist/src/routing/carriers/replay.js";
import { shapeMessages } from "../dist/src/routing/carriers/shape-messages.js";
import { fingerprintOf } from "../dist/src/conversation/fingerprint.js";
import { findSession } from "../dist/src/turn/sessions/session-finder.js";
import { openSqliteStorage } from "../dist/src/storage/sqlite/open-sqlite-storage.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const home = mkdtempSync(join(tmpdir(), "carrierd-bench-replay-"));
const storage = openSqliteStorage({ home });
const keyHash = "bench-scope";
const policy = {
  fields: ["reasoning_content", "reasoning", "reasoning_details"],
  mustEcho: false,
  requestExtra: undefined,
  native: true,
  replay: undefined,
  routeIndex: 0,
};
const target = { plugin: "openai-compatible", upstreamModel: "m", effective: policy.fields, native: true, pluginHasNative: false };

// a 1,000-turn tool loop, each turn with ~2 KB of reasoning and a signed details array
const history = [{ role: "user", content: "start" }];
for (let n = 1; n <= TURNS; n++) {
  const toolCalls = [{ id: `call_${n}`, type: "function", function: { name: "step", arguments: JSON.stringify({ n }) } }];
  const reasoning = `Turn ${n}: ${"thinking ".repeat(220)}`;
  storage.writes.saveNow({
    id: `turn_${n}`,
    sessionId: "sess_bench",
    keyHash,
    parentTurnId: n > 1 ? `turn_${n - 1}` : undefined,
    model: "m",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content: "",
    toolCalls,
    reasoningText: reasoning,
    reasoningDetails: [{ type: "reasoning.text", text: reasoning, signature: "E".repeat(400), index: 0 }],
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "tool_calls",
    upstreamId: undefined,
    fingerprint: fingerprintOf("", toolCalls),
  });
  history.push({ role: "assistant", content: null, tool_calls: toolCalls }, { role: "tool", tool_call_id: `call_${n}`, content: "ok" });
}

// what findSession reads: the matches of the request's lookup, and the turns at depths
const reads = {
  matchesFor: async (hash, keys) =>
    (await storage.turns.lookup({ keyHash: hash, keys, provider: "none", host: "none", model: "none", explicit: undefined, withCarriers: false })).matches,
  turnsAtDepths: (hash, sessionId, asked) => storage.turns.turnsAtDepths(hash, sessionId, asked),
};

async function request(messages) {
  const match = await findSession(reads, keyHash, messages, undefined);
  const sources = await storage.turns.replaySources(match.turnIds);
  const { messages: attached } = attachStoredCarriers(messages, sources, target);
  return { match, wire: shapeMessages(attached, policy) };
}

async function measure(messages) {
  await request(messages); // warm the statement cache
  const times = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    await request(messages);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median_ms: +times[Math.floor(times.length / 2)].toFixed(3), p95_ms: +times[Math.floor(times.length * 0.95)].toFixed(3) };
}

const long = await request(history);
if (long.match.sessionId !== "sess_bench" || long.match.turnIds.size !== TURNS) throw new Error("the long history did not match its session");
const short = await measure(history.slice(0, 3));
const full = await measure(history);
// for scale: serialising the upstream body that this history becomes, which every request pays anyway
const started = process.hrtime.bigint();
const bytes = JSON.stringify({ model: "m", messages: long.wire }).length;
const serialiseMs = Number(process.hrtime.bigint() - started) / 1e6;
console.log(
  JSON.stringify(
    {
      turns: TURNS,
      rounds: ROUNDS,
      one_turn_history: short,
      full_history: full,
      per_assistant_message_us: +((full.median_ms / TURNS) * 1000).toFixed(2),
      upstream_body_bytes: bytes,
      serialise_upstream_body_ms: +serialiseMs.toFixed(2),
    },
    null,
    2,
  ),
);
await storage.close();
rmSync(home, { recursive: true, force: true });
