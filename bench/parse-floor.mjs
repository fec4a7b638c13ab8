// The parse floor's own part (issue 37), timed alone: what any gateway that
// rewrites an agent's body must spend on top of forwarding it — JSON.parse of
// the body, attaching each assistant turn's reasoning (a string it already
// holds, as a store lookup would return it), and JSON.stringify of the same
// body. Run pinned to the core the gateways run on:
//   node parse-floor.mjs WORKLOAD BODY_FILE
// Prints {"us": µs of CPU per body, "iterations": n} after a warm-up. CPU
// time (this process, all its threads, like the gateways' figures from
// /proc), not wall time: on a shared host the wall clock also counts the
// time other processes held the core.
import { readFileSync } from "node:fs";
import { reasoningOf, WORKLOADS } from "./agent-workloads.mjs";

const [name, bodyFile] = process.argv.slice(2);
const workload = WORKLOADS[name];
const bytes = readFileSync(bodyFile);
const stored = Array.from({ length: 1000 }, (_, turn) => reasoningOf(turn));

function rewrite() {
  // bytes → text → object, as a server reading a request does
  const body = JSON.parse(bytes.toString("utf8"));
  const turns = workload.assistantTurns(body);
  for (let i = 0; i < turns.length; i++) turns[i].reasoning_content = stored[i];
  return Buffer.from(JSON.stringify(body));
}

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
// batches of about 100 ms of CPU each, whatever the body's size; the median batch's CPU per body
const probe = cpuUs();
for (let i = 0; i < 5; i++) rewrite();
const perBatch = Math.max(5, Math.round(100_000 / Math.max((cpuUs() - probe) / 5, 1)));
for (let i = 0; i < perBatch; i++) rewrite(); // warm-up
const batches = [];
for (let batch = 0; batch < 7; batch++) {
  const start = cpuUs();
  for (let i = 0; i < perBatch; i++) rewrite();
  batches.push((cpuUs() - start) / perBatch);
}
batches.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ us: batches[batches.length >> 1], iterations: perBatch * batches.length })}\n`);
