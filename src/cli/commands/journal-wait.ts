import { join } from "node:path";
import { resolveHome } from "../../foundation/config/options.js";
import { JOURNAL_FILE, journalHoldsSession } from "../../storage/sqlite/turn-journal.js";

/** Longer than a running gateway takes to commit a journaled turn (25 ms), with room for a busy machine. */
const WAIT_MS = 2000;
const POLL_MS = 10;

/**
 * Before a CLI command removes or copies a session: waits until the
 * gateway's journal holds no turn of it. A turn the gateway answered alone
 * is in state.db up to 25 ms after its answer (docs/operators.md); removed
 * before that, its commit would bring the session back, and a branch
 * would miss it. Returns false when the turn is still there after the wait
 * (a gateway that stopped before committing it commits it at its next
 * start): the caller refuses rather than lose or resurrect it.
 */
export function waitForJournal(home: string | undefined, sessionId: string): boolean {
  const file = join(resolveHome(home), JOURNAL_FILE);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; journalHoldsSession(file, sessionId); waited += POLL_MS) {
    if (waited >= WAIT_MS) {
      console.error(
        `session ${sessionId} has a turn the gateway has not committed to state.db yet (${file}); retry in a moment, or start the gateway, which commits it first`,
      );
      process.exitCode = 1;
      return false;
    }
    Atomics.wait(pause, 0, 0, POLL_MS); // a synchronous sleep: the command itself is synchronous
  }
  return true;
}
