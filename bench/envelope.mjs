// What an encrypted_content envelope costs per reasoning item
// (src/routing/carriers/envelope.ts): its size against the carriers' own JSON, and
// the time to seal and to open it, for short (500 characters) and long
// (8,000 characters) reasoning. Two shapes of carriers: the plain reasoning
// text alone (DeepSeek and the other reasoning_content providers), and the
// text with a signed thinking block in the plugin's native record
// (Anthropic). The key ring is warm, as on a gateway after its first seal;
// each figure is the median of BLOCKS blocks of CALLS calls. Opening is
// timed twice: the first time an instance sees an envelope (decrypt,
// inflate, parse), and again (a client resending its history: answered
// from the instance's memory of envelopes it opened).
//   npx tsc -p tsconfig.json && node bench/envelope.mjs
//   CALLS=4000 BLOCKS=7 node bench/envelope.mjs
import { randomBytes } from "node:crypto";
import { EnvelopeKeyRing } from "../dist/src/routing/carriers/envelope-keys.js";
import { Envelopes } from "../dist/src/routing/carriers/envelope.js";

const CALLS = Number(process.env.CALLS ?? 2000);
const BLOCKS = Number(process.env.BLOCKS ?? 5);
const SCOPE = "Hq3v0l7bW3m9kK1xY2zA4Q";

/** Keys held in memory: the store is read once per gateway, so it is no part of the per-item cost. */
const keys = [];
const store = { list: async () => keys, add: async (key) => (keys.some((held) => held.generation === key.generation) || keys.push(key), keys) };
const ring = new EnvelopeKeyRing(store);
const envelopes = new Envelopes(ring);

/** Text that reads like reasoning (words of varied length, punctuation), not one repeated phrase: deflate must not flatter it. */
function reasoningOf(chars, seed) {
  const words =
    "the user asks for a plan so I should first check which files change then run the tests and compare the output with what we expect before answering carefully because a wrong step would cost another round".split(
      " ",
    );
  let state = seed;
  let text = "";
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += words[state % words.length] + (state % 13 === 0 ? ". " : state % 7 === 0 ? ", " : " ");
  }
  return text.slice(0, chars);
}

function carriers(shape, chars) {
  const text = reasoningOf(chars, chars);
  const base = { id: "turn_01j9zq3", sessionId: "sess_01j9zq3", plugin: "openai-compatible", provider: "deepseek", upstreamModel: "deepseek-reasoner" };
  if (shape === "reasoning text") return { ...base, reasoningText: text, reasoningDetails: undefined, nativeRecord: undefined };
  // a Claude thinking block's signature is about 1/2 of the thinking's length again, base64
  const signature = randomBytes(Math.max(200, Math.floor(chars / 2))).toString("base64");
  return {
    ...base,
    plugin: "anthropic",
    provider: "anthropic",
    upstreamModel: "claude-sonnet-4-20250514",
    reasoningText: text,
    reasoningDetails: undefined,
    nativeRecord: {
      content: [
        { type: "thinking", thinking: text, signature },
        { type: "tool_use", id: "toolu_01", name: "exec_command", input: { cmd: "ls" } },
      ],
    },
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed(run) {
  const blocks = [];
  for (let block = 0; block < BLOCKS; block++) {
    const start = process.hrtime.bigint();
    for (let call = 0; call < CALLS; call++) await run();
    blocks.push(Number(process.hrtime.bigint() - start) / 1000 / CALLS);
  }
  return median(blocks);
}

console.log(`envelope: ${CALLS} calls × ${BLOCKS} blocks, median of the blocks' means (Node ${process.version})`);
console.log("carriers          reasoning   raw JSON B   envelope B   ratio   seal µs   open µs (first)   open µs (again)");
for (const shape of ["reasoning text", "signed thinking"]) {
  for (const chars of [500, 8000]) {
    const sealed = carriers(shape, chars);
    const raw = Buffer.byteLength(JSON.stringify({ reasoning_content: sealed.reasoningText, native_record: sealed.nativeRecord }));
    const envelope = await envelopes.seal(sealed, SCOPE);
    const opened = await envelopes.open(envelope, SCOPE);
    if (JSON.stringify(opened) !== JSON.stringify(sealed)) throw new Error("the envelope did not open to the carriers sealed");
    const sealUs = await timed(() => envelopes.seal(sealed, SCOPE));
    // a fresh instance each call: nothing opened before
    const openUs = await timed(() => new Envelopes(ring).open(envelope, SCOPE));
    const againUs = await timed(() => envelopes.open(envelope, SCOPE));
    const bytes = Buffer.byteLength(envelope);
    console.log(
      `${shape.padEnd(17)} ${String(chars).padStart(9)}   ${String(raw).padStart(10)}   ${String(bytes).padStart(10)}   ${(bytes / raw).toFixed(2).padStart(5)}   ${sealUs.toFixed(1).padStart(7)}   ${openUs.toFixed(1).padStart(15)}   ${againUs.toFixed(1).padStart(15)}`,
    );
  }
}
