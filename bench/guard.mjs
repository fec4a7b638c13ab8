// The guard: this tree's build (B) against another commit's (A), on the same
// requests, their runs interleaved (A B, B A, …) in one process tree so a busy
// spell of the shared host falls on both. It builds the commit beside the tree,
// then per workload and round measures, for each build, the gateway's CPU time
// per request and its added p50 at one connection (over the upstream reached
// directly) and its throughput at 64 connections, with the raw proxy beside
// them; it adds rounds until each ratio B ÷ A is known within ±5 % (95 %
// confidence over the rounds) or ROUNDS_MAX is reached, then prints a verdict
// per workload: slower beyond the spread, faster, or no difference.
//   npm run bench:guard <commit>               e.g. the merge base: npm run bench:guard main
//   GUARD_WORKLOADS=trivial,carried-0 ROUNDS_MAX=6 npm run bench:guard 9c58506
// Workloads: `trivial` (a one-message chat request), `codex-N`, `opencode-N` and
// `claude-code-N` (bench/agent-workloads.mjs's bodies with N turns of history,
// on the openai-compatible route), `carried-N` (Claude Code's body on an
// Anthropic route: the Messages request carried as sent). A build that does not
// answer a workload (it predates that door) is left out of that workload's row.
// CPU is read from /proc/<pid>/stat before and after each run (a settle of
// 100 ms first, so work done after the answers is counted), nothing asked of
// the gateway. Builds are kept in $XDG_CACHE_HOME/carrierd-guard (GUARD_CACHE).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { WORKLOADS } from "./agent-workloads.mjs";
import { anthropicRoutesYaml, KEY, routesYaml, startCarrierd } from "./gateway.mjs";
import { load } from "./load.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";

const tree = fileURLToPath(new URL("..", import.meta.url));
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 2);
const ROUNDS_MIN = Number(process.env.ROUNDS_MIN ?? 3);
const ROUNDS_MAX = Number(process.env.ROUNDS_MAX ?? 10);
const SPREAD = Number(process.env.SPREAD ?? 0.05);
const LOADED = 64;
const DEFAULT_WORKLOADS = "trivial,codex-0,codex-100,opencode-0,opencode-100,claude-code-0,claude-code-100,carried-0,carried-100";

const commit = process.argv[2];
if (!commit) {
  console.error("usage: npm run bench:guard <commit>   (this tree's build against that commit's)");
  process.exit(2);
}
const git = (...args) => execFileSync("git", args, { cwd: tree, encoding: "utf8" }).trim();
const sha = git("rev-parse", "--verify", `${commit}^{commit}`);

/**
 * The commit checked out and built under the cache (once per commit): a git
 * worktree whose node_modules is this tree's when its lock pins the same
 * packages the gateway runs on and is built with, else its own `npm ci`
 * (one per lockfile).
 */
function buildBeside(sha) {
  const cache = process.env.GUARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "carrierd-guard");
  const dir = join(cache, "builds", sha);
  if (existsSync(join(dir, ".built"))) return dir;
  mkdirSync(join(cache, "builds"), { recursive: true });
  git("worktree", "prune");
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  git("worktree", "add", "--detach", dir, sha);
  const lock = readFileSync(join(dir, "package-lock.json"));
  const shared = sameBuildPackages(lock, readFileSync(join(tree, "package-lock.json")));
  symlinkSync(shared ? realpathSync(join(tree, "node_modules")) : modulesFor(cache, dir, lock), join(dir, "node_modules"));
  console.log(`building ${sha.slice(0, 10)} in ${dir}`);
  execFileSync(process.execPath, [join(dir, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { cwd: dir, stdio: "inherit" });
  writeFileSync(join(dir, ".built"), `${sha}\n`);
  return dir;
}

/**
 * Whether two locks pin the same packages for the build: those the gateway
 * runs on and TypeScript. Type-only packages are left out (they change no
 * emitted line; a build they broke would stop here), and so are test and bench tools.
 */
function sameBuildPackages(lockA, lockB) {
  const forBuild = (lock) =>
    JSON.stringify(
      Object.entries(JSON.parse(lock).packages)
        .filter(([path, entry]) => (!entry.dev || path === "node_modules/typescript") && !/^node_modules\/(@types\/|undici-types$)/.test(path) && path !== "")
        .map(([path, entry]) => [path, entry.version, entry.integrity]),
    );
  return forBuild(lockA) === forBuild(lockB);
}

/** `npm ci` of another lockfile, once per lockfile, in a folder of its own (the package's scripts left out: no build before the sources are there). */
function modulesFor(cache, dir, lock) {
  const modules = join(cache, "modules", createHash("sha256").update(lock).digest("hex").slice(0, 16));
  if (!existsSync(join(modules, ".installed"))) {
    rmSync(modules, { recursive: true, force: true });
    mkdirSync(modules, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    delete manifest.scripts;
    writeFileSync(join(modules, "package.json"), JSON.stringify(manifest, null, 2));
    writeFileSync(join(modules, "package-lock.json"), lock);
    console.log(`npm ci for ${dir}'s package-lock.json (its lock differs from this tree's) in ${modules}`);
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: modules, stdio: "inherit" });
    writeFileSync(join(modules, ".installed"), "");
  }
  return join(modules, "node_modules");
}

/** The workloads asked for: each names its upstream (chat or anthropic), its ingress path and its body. */
function workloadsOf(names) {
  return names.map((name) => {
    if (name === "trivial")
      return { name, upstream: "chat", path: "/v1/chat/completions", body: { model: "bench", messages: [{ role: "user", content: "hi" }] } };
    const match = /^(.+)-(\d+)$/.exec(name);
    const turns = Number(match?.[2]);
    if (match?.[1] === "carried")
      return { name, upstream: "anthropic", path: "/v1/messages", body: WORKLOADS["claude-code"].body(turns, { model: "claude-sonnet-4-5", stream: false }) };
    const agent = WORKLOADS[match?.[1]];
    if (!agent) throw new Error(`unknown workload ${name}: trivial, carried-N or one of ${Object.keys(WORKLOADS).join(", ")} with -N turns`);
    return { name, upstream: "chat", path: agent.path, body: agent.body(turns, { model: "bench", stream: false }) };
  });
}

/** Whether `url` answers the body with a 200 (a build that predates a door answers 404). */
async function answers(url, bodyFile) {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: readFileSync(bodyFile),
  });
  const text = await response.text();
  return response.status === 200 ? "" : `${response.status} ${text.slice(0, 160)}`;
}

/** One load run against a target; with a pid, the process's CPU per request answered (after a settle for work left after the answers). */
async function measure(target, bodyFile, connections) {
  const before = target.pid ? await cpuMsOf(target.pid) : 0;
  const run = await load({ url: target.url, connections, seconds: SECONDS, bodyFile, key: KEY, core: 1 });
  if (target.pid) {
    await sleep(100);
    run.cpuUs = (((await cpuMsOf(target.pid)) - before) * 1000) / run.requests;
  }
  return run;
}

// Student's t at 97.5 % for 1..12 degrees of freedom, then the normal's 1.96.
const T975 = [12.71, 4.3, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.2, 2.18];

/** A ratio from paired per-round ratios: their geometric mean and the relative half-width of its 95 % interval. */
function ratioOf(ratios) {
  const logs = ratios.filter((value) => value > 0 && Number.isFinite(value)).map(Math.log);
  const n = logs.length;
  const mean = logs.reduce((sum, value) => sum + value, 0) / n;
  if (n < 2) return { ratio: Math.exp(mean), spread: Infinity, n };
  const sd = Math.sqrt(logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1));
  const halfWidth = (T975[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { ratio: Math.exp(mean), spread: Math.exp(halfWidth) - 1, n };
}

/** Per measure: B ÷ A with its spread and what it says, `higherIsWorse` for CPU and latency, not for throughput. */
function judge({ ratio, spread }, higherIsWorse) {
  if (Math.abs(Math.log(ratio)) <= Math.log(1 + spread)) return "same";
  return ratio > 1 === higherIsWorse ? "slower" : "faster";
}

function summarise(workload) {
  const rounds = workload.rounds;
  const per = (fn) => rounds.map(fn);
  const cpu = ratioOf(per((r) => r.together.B.cpuUs / r.together.A.cpuUs));
  const added = (r, side) => r.one[side].p50 - r.one.direct.p50;
  const p50 = ratioOf(per((r) => added(r, "B") / added(r, "A")));
  const rps = ratioOf(per((r) => r.many.B.rps / r.many.A.rps));
  const mean = (fn) => rounds.reduce((sum, r) => sum + fn(r), 0) / rounds.length;
  const ofRaw = (side) => ({
    cpu: ratioOf(per((r) => r.together[side].cpuUs / r.together.raw.cpuUs)).ratio,
    p50: ratioOf(per((r) => added(r, side) / added(r, "raw"))).ratio,
    rps: ratioOf(per((r) => r.many[side].rps / r.many.raw.rps)).ratio,
  });
  const verdicts = { cpu: judge(cpu, true), p50: judge(p50, true), rps: judge(rps, false) };
  const said = Object.entries(verdicts).filter(([, verdict]) => verdict !== "same");
  const worse = said.filter(([, verdict]) => verdict === "slower").map(([measure]) => measure);
  const better = said.filter(([, verdict]) => verdict === "faster").map(([measure]) => measure);
  const verdict = worse.length ? `SLOWER (${worse.join(", ")})` : better.length ? `faster (${better.join(", ")})` : "no difference";
  return {
    cpu,
    p50,
    rps,
    verdict,
    settled: [cpu, p50, rps].every((measure) => measure.spread < SPREAD),
    A: { cpuUs: mean((r) => r.together.A.cpuUs), addedMs: mean((r) => added(r, "A")), rps: mean((r) => r.many.A.rps), ofRaw: ofRaw("A") },
    B: { cpuUs: mean((r) => r.together.B.cpuUs), addedMs: mean((r) => added(r, "B")), rps: mean((r) => r.many.B.rps), ofRaw: ofRaw("B") },
    raw: { cpuUs: mean((r) => r.together.raw.cpuUs), addedMs: mean((r) => added(r, "raw")), rps: mean((r) => r.many.raw.rps) },
  };
}

const pct = ({ ratio, spread }) => `${ratio.toFixed(3)} ±${Number.isFinite(spread) ? (spread * 100).toFixed(1) : "∞"}%`;
const us = (value) => `${Math.round(value).toLocaleString("en")} µs`;

function table(workloads) {
  const heads = [
    "workload",
    "rounds",
    "CPU/req A",
    "B",
    "B÷A",
    "added p50 c=1 A",
    "B",
    "B÷A",
    `req/s c=${LOADED} A`,
    "B",
    "B÷A",
    "÷ raw (CPU, p50, req/s) A",
    "B",
    "verdict",
  ];
  const lines = [`| ${heads.join(" | ")} |`, `|${heads.map(() => "---").join("|")}|`];
  for (const workload of workloads) {
    if (workload.skipped) {
      lines.push(`| ${workload.name} | — | ${workload.skipped} |${" |".repeat(heads.length - 3)}`);
      continue;
    }
    const s = summarise(workload);
    lines.push(
      `| ${[
        workload.name,
        workload.rounds.length,
        us(s.A.cpuUs),
        us(s.B.cpuUs),
        pct(s.cpu),
        `${s.A.addedMs.toFixed(3)} ms`,
        `${s.B.addedMs.toFixed(3)} ms`,
        pct(s.p50),
        Math.round(s.A.rps),
        Math.round(s.B.rps),
        pct(s.rps),
        ...["A", "B"].map((side) => `${s[side].ofRaw.cpu.toFixed(2)}, ${s[side].ofRaw.p50.toFixed(2)}, ${s[side].ofRaw.rps.toFixed(2)}`),
        s.verdict,
      ].join(" | ")} |`,
    );
  }
  return lines.join("\n");
}

async function main() {
  console.log(
    `guard: A = ${sha.slice(0, 10)} (${git("log", "-1", "--format=%s", sha).slice(0, 80)}), B = this tree (${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? " + changes" : ""})`,
  );
  const builds = { A: buildBeside(sha), B: tree };
  const workloads = workloadsOf((process.env.GUARD_WORKLOADS ?? DEFAULT_WORKLOADS).split(",").filter(Boolean));
  const work = mkdtempSync(join(tmpdir(), "carrierd-guard-"));
  const started = [];
  const begin = async (handle) => (started.push(handle), handle);
  // stopped early (Ctrl-C): the gateways, proxies and upstreams go with it
  for (const signal of ["SIGINT", "SIGTERM"])
    process.once(signal, () => {
      for (const handle of started) handle.child.kill("SIGTERM");
      process.exit(130);
    });
  try {
    const upstreams = {};
    const targets = {};
    for (const kind of new Set(workloads.map((workload) => workload.upstream))) {
      const upstream = await begin(await startPinned(1, [here(kind === "chat" ? "./upstream.mjs" : "./anthropic-upstream.mjs")]));
      const raw = await begin(await startPinned(0, [here("./raw-proxy.mjs")], { UPSTREAM: `http://127.0.0.1:${upstream.port}` }));
      upstreams[kind] = upstream;
      targets[kind] = { direct: { port: upstream.port }, raw: { port: raw.port, pid: raw.pid } };
      for (const [side, checkout] of Object.entries(builds)) {
        const responses = existsSync(join(checkout, "plugins", "openai-responses"));
        const routesOf = kind === "chat" ? (port) => routesYaml(port, "", { responses }) : anthropicRoutesYaml;
        const gateway = await begin(await startCarrierd(upstream.port, join(work, `${kind}-${side}`), { checkout, routesOf }));
        targets[kind][side] = { port: gateway.port, pid: gateway.pid };
      }
    }
    for (const workload of workloads) {
      workload.bodyFile = join(work, `${workload.name}.json`);
      writeFileSync(workload.bodyFile, JSON.stringify(workload.body));
      workload.targets = {};
      for (const [name, target] of Object.entries(targets[workload.upstream])) {
        const path = name === "direct" ? (workload.upstream === "chat" ? "/v1/chat/completions" : "/v1/messages") : workload.path;
        workload.targets[name] = { ...target, name, url: `http://127.0.0.1:${target.port}${path}` };
      }
      const refused = (await answers(workload.targets.A.url, workload.bodyFile)) || (await answers(workload.targets.B.url, workload.bodyFile));
      if (refused) {
        workload.skipped = `not served by one build: ${refused.replaceAll("|", "/").replaceAll("\n", " ")}`;
        console.log(`${workload.name}: ${workload.skipped}`);
        continue;
      }
      for (const target of Object.values(workload.targets))
        await load({ url: target.url, connections: LOADED, seconds: 1, bodyFile: workload.bodyFile, key: KEY, core: 1 });
      workload.rounds = [];
    }
    const open = () => workloads.filter((workload) => !workload.skipped && !workload.done);
    for (let round = 0; round < ROUNDS_MAX && open().length; round++) {
      for (const workload of open()) {
        const { direct, raw, A, B } = workload.targets;
        const builds = round % 2 ? [B, A] : [A, B];
        const one = {};
        const many = {};
        for (const target of [direct, raw, ...builds]) one[target.name] = await measure(target, workload.bodyFile, 1);
        // CPU per request from runs at the same moment, one client each: a busy spell of the host falls on all three alike
        const together = Object.fromEntries(
          await Promise.all([raw, ...builds].map(async (target) => [target.name, await measure(target, workload.bodyFile, 1)])),
        );
        for (const target of [raw, ...builds]) many[target.name] = await measure(target, workload.bodyFile, LOADED);
        workload.rounds.push({ one, together, many });
        if (workload.rounds.length >= 2) {
          const s = summarise(workload);
          console.log(`round ${round + 1} ${workload.name}: CPU B÷A ${pct(s.cpu)}, added p50 ${pct(s.p50)}, req/s ${pct(s.rps)}`);
          if (workload.rounds.length >= ROUNDS_MIN && s.settled) workload.done = true;
        }
      }
    }
    const result = table(workloads);
    console.log(
      `\nB = this tree, A = ${sha.slice(0, 10)}; ratios B ÷ A (geometric mean over rounds ±95 % interval), ${SECONDS} s runs; CPU per request and added p50 at c=1, req/s at c=${LOADED}\n`,
    );
    console.log(result);
    mkdirSync(here("./results"), { recursive: true });
    writeFileSync(here("./results/guard.md"), `# npm run bench:guard ${commit}\n\nA = ${sha}, B = this tree\n\n${result}\n`);
  } finally {
    for (const handle of started.reverse()) await stop(handle);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
