import { existsSync } from "node:fs";
import { join } from "node:path";
import { resolveHome } from "../../foundation/config/options.js";
import { resolveStore } from "../../foundation/config/store-choice.js";
import type { Verdict } from "../../storage/verdicts.js";
import { withState } from "./with-state.js";

/** The verdicts in force for (provider, host, model), read from the configured store; none when a SQLite store has no state.db yet. */
export async function verdictsInForce(homeFlag: string | undefined, provider: string, host: string, model: string): Promise<Verdict[]> {
  const home = resolveHome(homeFlag);
  if (resolveStore({}).kind === "sqlite" && !existsSync(join(home, "state.db"))) return [];
  const verdicts = await withState({ home }, (storage) => storage.verdicts.list());
  return verdicts.filter((verdict) => verdict.provider === provider && verdict.host === host && verdict.model === model);
}
