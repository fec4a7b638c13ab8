// Where a CPU profile's time goes (node --cpu-prof): self time summed per
// file and per function, the top of each printed with its share of the
// time the thread was busy.
//   node bench/profile-summary.mjs PROFILE.cpuprofile [TOP] [SKIP_S]
// SKIP_S leaves out the profile's first seconds (the start and the warm-up).
import { readFileSync } from "node:fs";

const [file, topText = "15", skipText = "0"] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8"));
const top = Number(topText);
const selfUs = new Map();
// samples[i] was taken timeDeltas[i] µs after the one before
let elapsedUs = 0;
profile.samples.forEach((id, i) => {
  elapsedUs += profile.timeDeltas[i] ?? 0;
  if (elapsedUs >= Number(skipText) * 1e6) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
// shares of the time the thread was busy: idle time (waiting on the event loop) is left out
const IDLE = new Set(["(idle)", "(program)"]);
const busy = (node) => !IDLE.has(node.callFrame.functionName);
const total = profile.nodes.filter(busy).reduce((sum, node) => sum + (selfUs.get(node.id) ?? 0), 0);
const byFile = new Map();
const byFunction = new Map();
const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value);
for (const node of profile.nodes) {
  const spent = selfUs.get(node.id) ?? 0;
  if (!spent || !busy(node)) continue;
  const { url, functionName, lineNumber } = node.callFrame;
  const where = url ? url.replace(/^file:\/\//, "").replace(/^.*?\/(dist\/|node_modules\/)/, "$1") : `(${functionName || "native"})`;
  add(byFile, where, spent);
  add(byFunction, `${functionName || "(anonymous)"} ${where}${url ? `:${lineNumber + 1}` : ""}`, spent);
}
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, value] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((value / total) * 100).toFixed(1).padStart(5)}%  ${(value / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms busy`);
print("self time by file", byFile);
print("self time by function", byFunction);
