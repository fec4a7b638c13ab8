// What the provider panel's counting costs a turn, in process: the events of
// a turn (started, its first reasoning delta, completed) published on a bus
// with nobody listening and on one with ProviderStats listening, in
// alternating rounds; then how long reading a window takes once they are in.
//   npx tsc -p tsconfig.json && node bench/provider-stats.mjs
//   TURNS=500000 ROUNDS=5 node bench/provider-stats.mjs
import "reflect-metadata";
import { EventBus } from "../dist/src/foundation/event-bus/event-bus.js";
import { ProviderStats } from "../dist/src/operations/provider-stats/provider-stats.js";

const TURNS = Number(process.env.TURNS ?? 200_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MODELS = 8;

/** CPU µs per turn for `turns` turns published on `bus`. */
function publishTurns(bus, turns) {
  const start = process.cpuUsage();
  for (let i = 0; i < turns; i++) {
    const turnId = `turn_${i}`;
    const model = `model-${i % MODELS}`;
    bus.publish({
      type: "turn.started",
      session_id: "s",
      turn_id: turnId,
      seq: 0,
      model,
      provider: "bench",
      upstream_model: model,
      route: 0,
      fields: [],
      upstream_ms: 3,
    });
    if (bus.wants("reasoning.delta")) bus.publish({ type: "reasoning.delta", session_id: "s", turn_id: turnId, seq: 1, text: "x" });
    bus.publish({
      type: "turn.completed",
      session_id: "s",
      turn_id: turnId,
      seq: 2,
      usage: { prompt_tokens: 10, completion_tokens: 20 },
      finish_reason: "stop",
    });
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / turns;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const bare = new EventBus();
const counted = new EventBus();
const stats = new ProviderStats(counted);
const alone = [];
const withStats = [];
for (let round = 0; round < ROUNDS; round++) {
  alone.push(publishTurns(bare, TURNS));
  withStats.push(publishTurns(counted, TURNS));
}
const reads = {};
for (const window of ["5m", "1h", "24h"]) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < 50; i++) stats.snapshot(window);
  reads[window] = Number(process.hrtime.bigint() - start) / 1e6 / 50;
}
stats.close();
console.log(`turns per round ${TURNS}, rounds ${ROUNDS}, ${MODELS} models`);
console.log(`bus alone          ${median(alone).toFixed(3)} µs CPU per turn (median)`);
console.log(`with ProviderStats ${median(withStats).toFixed(3)} µs CPU per turn (median)`);
console.log(`added              ${(median(withStats) - median(alone)).toFixed(3)} µs CPU per turn`);
console.log(
  `reading a window   ${Object.entries(reads)
    .map(([window, ms]) => `${window} ${ms.toFixed(2)} ms`)
    .join(", ")}`,
);
