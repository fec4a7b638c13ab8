import type { CommandModule } from "yargs";
import { scopeOfStored, storedSessionId } from "../../conversation/session-scope.js";
import { newId } from "../../turn/sessions/session-id.js";
import { checkpointJson, checkpointLine } from "../../turn/compaction/session-view.js";
import type { StoredTurn } from "../../storage/turns.js";
import { waitForJournal } from "./journal-wait.js";
import { withState } from "./with-state.js";
import { shown as quoted } from "../../foundation/util/shown.js";

interface SessionsFlags {
  home?: string;
  id?: string;
  limit?: number;
  json?: boolean;
  at?: number;
  all?: boolean;
}

/** `sessions show --json`, one turn (documented in docs/sessions-and-replay.md). */
function turnJson(turn: StoredTurn): object {
  return {
    position: turn.position,
    id: turn.id,
    parent_turn_id: turn.parentTurnId,
    model: turn.model,
    plugin: turn.plugin,
    provider: turn.provider,
    host: turn.host,
    upstream_model: turn.upstreamModel,
    created_at: turn.createdAt,
    finish_reason: turn.finishReason,
    content: turn.content,
    tool_calls: turn.toolCalls,
    carriers: carrierNames(turn),
    reasoning_text: turn.reasoningText || null,
    reasoning_details: turn.reasoningDetails ?? null,
    native_record: turn.nativeRecord ?? null,
    usage: turn.usage ?? null,
  };
}

/** Which reasoning carriers a turn holds: the plain text (replayed as reasoning_content / reasoning), reasoning_details, native_record. */
function carrierNames(turn: StoredTurn): string[] {
  const names: string[] = [];
  if (turn.reasoningText) names.push("reasoning_text");
  if (turn.reasoningDetails?.length) names.push("reasoning_details");
  if (turn.nativeRecord) names.push("native_record");
  return names;
}

export const sessionsCommand: CommandModule<object, SessionsFlags> = {
  command: "sessions <action>",
  describe: "list, show, branch and remove stored sessions",
  builder: (yargs) =>
    yargs
      .command<SessionsFlags>({
        command: "list",
        describe: "sessions, most recently used first",
        builder: (y) => y.option("limit", { type: "number", default: 20 }).option("json", { type: "boolean", default: false }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const limit = Number.isInteger(flags.limit) && flags.limit! > 0 ? flags.limit! : 20;
            const rows = (await storage.sessions.list({ limit })).map((row) => ({
              id: row.id,
              model: row.model,
              parent_id: row.parentId,
              turns: row.turns,
              created_at: row.createdAt,
              updated_at: row.updatedAt,
            }));
            if (flags.json) return console.log(JSON.stringify(rows, null, 2));
            if (rows.length === 0) return console.log("no sessions yet");
            // an access key's session is stored as `name~scope`, a client may name one up to 128 characters: the column fits the longest shown
            const idWidth = Math.max(...rows.map((row) => row.id.length));
            for (const row of rows)
              console.log(
                `${row.id.padEnd(idWidth)} ${String(row.turns).padStart(4)} turns  ${(row.model ?? "-").padEnd(28)} ${row.updated_at}${row.parent_id ? `  (branch of ${row.parent_id})` : ""}`,
              );
          }),
      })
      .command<SessionsFlags>({
        command: "show <id>",
        describe: "a session's turns, with which reasoning carriers each holds",
        builder: (y) =>
          y
            .positional("id", { type: "string" })
            .option("json", { type: "boolean", default: false })
            .option("all", { type: "boolean", default: false, describe: "also the turns compaction archived" }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const session = await storage.sessions.show(flags.id!);
            if (!session) return notFound(flags.id!);
            // compaction archives turns (docs/compaction.md#sessions-cli): shown only with --all, the checkpoint stands in for them
            const { compaction } = session;
            const checkpoint = compaction.checkpoints.at(-1);
            const shown = flags.all ? session.turnList : session.turnList.filter((turn) => !compaction.archived.has(turn.position));
            if (flags.json) {
              return console.log(
                JSON.stringify(
                  {
                    id: session.id,
                    model: session.model,
                    parent_id: session.parentId,
                    created_at: session.createdAt,
                    updated_at: session.updatedAt,
                    model_config: session.modelConfig,
                    turns: shown.map((turn) => ({ ...turnJson(turn), active: !compaction.archived.has(turn.position) })),
                    checkpoints: compaction.checkpoints.map(checkpointJson),
                  },
                  null,
                  2,
                ),
              );
            }
            console.log(
              `session ${session.id}  model ${session.model ?? "-"}  ${session.turns} turns${session.parentId ? `  branch of ${session.parentId}` : ""}`,
            );
            let checkpointShown = false;
            for (const turn of shown) {
              if (checkpoint && !checkpointShown && turn.position > (checkpoint.archivedThrough ?? 0) && !compaction.archived.has(turn.position)) {
                console.log(checkpointLine(checkpoint));
                checkpointShown = true;
              }
              const details =
                turn.reasoningDetails?.map((detail) => (detail && typeof detail === "object" && !Array.isArray(detail) ? quoted(detail.type ?? "?") : "?")) ??
                [];
              const held = [
                turn.reasoningText ? `reasoning text (${turn.reasoningText.length} chars)` : undefined,
                details.length ? `reasoning_details [${details.join(", ")}]` : undefined,
                turn.nativeRecord ? `native_record` : undefined,
              ].filter(Boolean);
              const said =
                turn.toolCalls.length > 0
                  ? `tool calls: ${turn.toolCalls.map((call) => call.function.name).join(", ")}`
                  : JSON.stringify(turn.content.slice(0, 60));
              console.log(
                `  #${turn.position}${compaction.archived.has(turn.position) ? " [archived]" : ""}  ${turn.provider} (${turn.host || "in-process"}) ${turn.upstreamModel}  ${said}`,
              );
              console.log(`       carriers: ${held.length > 0 ? held.join("; ") : "none"}`);
            }
            if (checkpoint && !checkpointShown) console.log(checkpointLine(checkpoint));
            if (!flags.all && compaction.archived.size > 0) console.log(`  (${compaction.archived.size} archived turn(s) hidden; --all shows them)`);
            const rejected = session.modelConfig.rejected_carriers ?? [];
            for (const [provider, host, model, fields] of rejected)
              console.log(`  verdict in this session: ${provider} (${host}) ${model} rejects ${fields.join(", ")}`);
          }),
      })
      .command<SessionsFlags>({
        command: "branch <id>",
        describe: "a new session holding turns 1..N, every reasoning carrier copied",
        builder: (y) => y.positional("id", { type: "string" }).option("at", { type: "number", describe: "last turn to copy (default: all)" }),
        handler: (flags) =>
          // a turn still in the gateway's journal first reaches state.db
          whenCommitted(flags, () =>
            withState(flags, async (storage) => {
              if (flags.at !== undefined && (!Number.isInteger(flags.at) || flags.at < 0)) {
                console.error("--at must be a whole number of turns");
                process.exitCode = 1;
                return;
              }
              // compaction-aware: past a checkpoint the branch gets the active turns and the summary
              // the branch is the source key's session, as the source is (docs/sessions-and-replay.md, "Whose a session is")
              const branch = await storage.sessions.branch(flags.id!, storedSessionId(newId("sess_"), scopeOfStored(flags.id!)), flags.at);
              if (!branch) return notFound(flags.id!);
              console.log(branch.id);
              console.error(`branched ${flags.id} into ${branch.id} with ${branch.turns} turn(s)${branch.checkpoint ? " and the compaction checkpoint" : ""}`);
            }),
          ),
      })
      .command<SessionsFlags>({
        command: "rm <id>",
        describe: "remove a session and its turns",
        builder: (y) => y.positional("id", { type: "string" }),
        handler: (flags) =>
          // a turn still in the gateway's journal first reaches state.db
          whenCommitted(flags, () =>
            withState(flags, async (storage) => {
              if (!(await storage.sessions.remove(flags.id!))) return notFound(flags.id!);
              console.log(`removed ${flags.id}`);
            }),
          ),
      })
      .demandCommand(1),
  handler: () => undefined,
};

function notFound(id: string): void {
  console.error(`no session ${id}`);
  process.exitCode = 1;
}

/** Runs `command` once the gateway's journal holds no turn of the session (see waitForJournal). */
async function whenCommitted(flags: SessionsFlags, command: () => Promise<void>): Promise<void> {
  if (waitForJournal(flags.home, flags.id!)) await command();
}
