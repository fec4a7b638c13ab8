import { existsSync } from "node:fs";
import { join } from "node:path";
import { resolveHome } from "../config/options.js";
import { openState } from "../store/open-state.js";
import type { Verdict } from "./verdict-store.js";

/** The verdicts in force for (provider, host, model), read from `$CARRIERD_HOME/state.db`; none when there is no state yet. */
export function verdictsInForce(homeFlag: string | undefined, provider: string, host: string, model: string): Verdict[] {
  const home = resolveHome(homeFlag);
  if (!existsSync(join(home, "state.db"))) return [];
  const state = openState(home);
  try {
    return state.verdicts.list().filter((verdict) => verdict.provider === provider && verdict.host === host && verdict.model === model);
  } finally {
    state.close();
  }
}
