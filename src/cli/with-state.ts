import { resolveHome } from "../config/options.js";
import { openState } from "../store/open-state.js";

/** Runs a CLI command against `$CARRIERD_HOME/state.db` (from --home or the environment), closing it afterwards. */
export function withState(flags: { home?: string }, run: (state: ReturnType<typeof openState>) => void): void {
  const state = openState(resolveHome(flags.home));
  try {
    run(state);
  } finally {
    state.close();
  }
}
