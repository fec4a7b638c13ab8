import { createReadStream, existsSync, statSync, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { CommandModule } from "yargs";
import { resolveHome } from "../../foundation/config/options.js";
import { shown } from "../../foundation/util/shown.js";

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const NAMES = Object.fromEntries(Object.entries(LEVELS).map(([name, value]) => [value, name]));

export const logsCommand: CommandModule<object, { home?: string; follow?: boolean; level?: string }> = {
  command: "logs",
  describe: "read $CARRIERD_HOME/logs, pretty-printed",
  builder: (yargs) =>
    yargs
      .option("follow", { alias: "f", type: "boolean", default: false, describe: "keep printing new lines" })
      .option("level", { type: "string", choices: Object.keys(LEVELS), default: "trace", describe: "lowest level shown" }),
  handler: async (flags) => {
    const file = join(resolveHome(flags.home), "logs", "carrierd.log");
    if (!existsSync(file)) {
      console.error(`no log yet at ${file}`);
      process.exitCode = 1;
      return;
    }
    const minimum = LEVELS[flags.level ?? "trace"] ?? 0;
    let offset = await printFrom(file, 0, minimum);
    if (!flags.follow) return;
    // reads are chained so two quick writes never print the same range twice
    let reading = Promise.resolve();
    let inode = statSync(file).ino;
    const catchUp = () => {
      reading = reading
        .then(async () => {
          if (!existsSync(file)) return; // rotated by rename: the new file's creation is the next event
          const { ino, size } = statSync(file);
          if (ino !== inode || size < offset) offset = 0; // a new file (rotation by rename), or truncated (copytruncate)
          inode = ino;
          offset = await printFrom(file, offset, minimum);
        })
        .catch((error: unknown) => console.error(`cannot read ${file}: ${(error as Error).message}`));
    };
    // the folder, not the file: a watch on the file would stay on the old inode after a rotation by rename
    watch(dirname(file), (_event, name) => {
      if (name === null || name === basename(file)) catchUp();
    });
    catchUp(); // whatever was written between the first read and the watch
    await new Promise(() => undefined);
  },
};

async function printFrom(file: string, start: number, minimum: number): Promise<number> {
  const end = statSync(file).size;
  if (end <= start) return start;
  const lines = createInterface({ input: createReadStream(file, { start, end: end - 1 }) });
  for await (const line of lines) {
    const formatted = format(line, minimum);
    if (formatted) console.log(formatted);
  }
  return end;
}

function format(line: string, minimum: number): string | undefined {
  try {
    const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = JSON.parse(line) as Record<string, unknown>;
    if (typeof level === "number" && level < minimum) return undefined;
    const when = typeof time === "number" ? new Date(time).toISOString() : "";
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : "";
    return `${when} ${(NAMES[level as number] ?? String(level)).toUpperCase().padEnd(5)} ${shown(msg ?? "")}${extra}`;
  } catch {
    return line;
  }
}
