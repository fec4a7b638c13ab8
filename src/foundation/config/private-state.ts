import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../util/error-message.js";

/** Files under $CARRIERD_HOME that hold secrets or stored reasoning: owner read/write only. */
export const PRIVATE_FILES = ["state.db", "state.db-wal", "state.db-shm", "state.db-journal", "turns.journal", "api_key", ".env", join("logs", "carrierd.log")];
/** Folders under it, owner only. */
const PRIVATE_FOLDERS = ["", "logs"];

/**
 * Makes `$CARRIERD_HOME` private before the gateway writes anything: the
 * home and its logs folder 0700, every state file that exists 0600 (a home
 * created by hand, restored from a backup or left by an older release may
 * be world-readable). Returns one line per thing that could not be
 * tightened (not the owner, a read-only mount), for the gateway to warn
 * about loudly (it starts anyway), and what it did tighten.
 */
export function tightenStateHome(home: string): { tightened: string[]; problems: string[] } {
  const result: { tightened: string[]; problems: string[] } = { tightened: [], problems: [] };
  mkdirSync(home, { recursive: true, mode: 0o700 });
  for (const folder of PRIVATE_FOLDERS) tighten(join(home, folder), 0o700, result);
  for (const file of PRIVATE_FILES) tighten(join(home, file), 0o600, result);
  return result;
}

function tighten(path: string, mode: number, { tightened, problems }: { tightened: string[]; problems: string[] }): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch {
    return; // not there (yet): created private
  }
  if ((current & ~mode) === 0) return;
  try {
    chmodSync(path, mode);
    tightened.push(`${path} (was ${current.toString(8).padStart(4, "0")})`);
  } catch (error) {
    problems.push(`${path} is mode ${current.toString(8).padStart(4, "0")} and could not be made ${mode.toString(8).padStart(4, "0")}: ${errorMessage(error)}`);
  }
}
