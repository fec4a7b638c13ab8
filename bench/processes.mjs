// Starting and stopping the processes a benchmark measures, each pinned to a core.
import { spawn } from "node:child_process";
import { once } from "node:events";

/** Starts `node script` pinned to `core`; resolves with the port it prints ("listening PORT" or carrierd's line). */
export async function startPinned(core, args, env = {}) {
  const child = spawn("taskset", ["-c", String(core), process.execPath, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const port = await new Promise((resolve, reject) => {
    const onData = (data) => {
      output += data;
      const match = /listening (?:on http:\/\/127\.0\.0\.1:)?(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (data) => (output += data));
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`${args.join(" ")} did not start: ${output}`)), 60_000).unref();
  });
  child.stdout.removeAllListeners("data");
  child.stdout.resume();
  child.stderr.resume();
  return { child, port, pid: child.pid };
}

export async function stop(processHandle) {
  if (!processHandle || processHandle.child.exitCode !== null || processHandle.child.signalCode !== null) return;
  processHandle.child.kill("SIGTERM");
  await once(processHandle.child, "exit");
}

/** CPU time a process has used so far (user + system, all its threads), in ms (Linux /proc, 100 Hz ticks). */
export async function cpuMsOf(pid) {
  const { readFile } = await import("node:fs/promises");
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Peak and current resident memory of a process, in MiB (Linux /proc). */
export async function memoryOf(pid) {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}
