import { inject, injectable } from "tsyringe";
import { sessionName } from "../../conversation/session-scope.js";
import type { ChatService } from "../chat-service.js";
import { newId } from "../sessions/session-id.js";
import type { GatewayOptions } from "../../foundation/config/options.js";
import { CHAT_SERVICE, EVENT_BUS, LOGGER, OPTIONS, PLUGIN_HOST, ROUTE_SOURCE, STORAGE } from "../../foundation/container/tokens.js";
import { withKey, type EventBus } from "../../foundation/event-bus/event-bus.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { ChatMessage, ChatRequest } from "../../providers/contract.js";
import type { PluginHost } from "../../providers/plugin-host.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import type { Checkpoint } from "../../storage/checkpoints.js";
import type { Storage } from "../../storage/storage.js";
import { planCompaction, type Plan } from "./plan.js";
import { priceJson } from "./price.js";
import { summarize, transcriptOf } from "./summarize.js";
import { applyCheckpoint, SUMMARY_INDEX, summaryMessage, type ViewEntry } from "./view.js";
import { estimateWire, type WireContext, type WireEstimate } from "./wire-estimate.js";

/** routes.yaml `compact_at` when a model sets none. */
const DEFAULT_COMPACT_AT = 0.8;
/** How long a summary may take before the request goes on uncompacted. */
const SUMMARY_TIMEOUT_MS = 120_000;

/** One request of a daemon-owned history (a Responses chain). */
export interface CompactionRequest {
  /** The session the chain belongs to. */
  readonly sessionId: string | undefined;
  /** The data scope of the request's key (its turns, the summary's scratch session, the checkpoint's session). */
  readonly keyHash: string;
  /** The response this request continues; its chain's history is `history`. */
  readonly parentId: string | null;
  /** The chain's full stored history, oldest first. */
  readonly history: ChatMessage[];
  /** The whole chat request for a given history (instructions, then history, then the new input). */
  build(history: ChatMessage[]): ChatRequest;
  /**
   * Compact now, whatever the budget (POST /v1/responses/compact): planned
   * as if the history had just reached its budget (or the model's budget,
   * when that is smaller).
   */
  readonly force?: boolean;
}

/**
 * Compaction of daemon-owned histories (docs/compaction.md). Every request of a chain
 * gets the history under the checkpoint in force; when the wire estimate of
 * the request passes compact_at × context_window, the middle is summarised
 * once, the summary becomes the chain's newest checkpoint, and the turns it
 * replaced are archived. Kept messages are the stored ones, untouched: replay
 * attaches their carriers exactly as before.
 */
@injectable()
export class Compactor {
  constructor(
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(PLUGIN_HOST) private readonly plugins: PluginHost,
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(EVENT_BUS) private readonly bus: EventBus,
    @inject(LOGGER) private readonly log: Logger,
    @inject(OPTIONS) private readonly options: GatewayOptions,
  ) {}

  /** The chat request to send: under the checkpoint in force, compacted first when it would not fit. */
  async prepare(request: CompactionRequest): Promise<ChatRequest> {
    const { sessionId, parentId } = request;
    if (sessionId === undefined || parentId === null || request.history.length === 0) return request.build(request.history);
    const current = await this.storage.checkpoints.inForce(sessionId, parentId);
    const view = applyCheckpoint(request.history, current);
    const built = buildFrom(request, view);
    const table = this.routes.current;
    const resolved = table.resolveModel(built.model);
    if (!resolved || (!resolved.contextWindow && !request.force)) return built;
    const configured = resolved.contextWindow ? Math.floor(resolved.contextWindow * (resolved.compactAt ?? DEFAULT_COMPACT_AT)) : Number.POSITIVE_INFINITY;
    const wire: WireContext = { table, registry: this.plugins.registry, storage: this.storage, keyHash: request.keyHash, env: this.options.env };
    const before = await estimateWire(wire, built, resolved, sessionId);
    // forced: planned as if the history had just reached its budget, so about half of it stays (plan.ts AFTER_SHARE)
    const budget = request.force ? Math.min(configured, before.total) : configured;
    if (!request.force && before.total <= budget) return built;

    const offset = historyOffset(built, view);
    const costs = view.map((_entry, index) => before.messages[offset + index]);
    const input = built.messages.slice(offset + view.length);
    const plan = planCompaction({
      roles: view.map((entry) => entry.message.role),
      costs,
      fixed: before.total - costs.reduce((sum, cost) => sum + cost, 0),
      budget,
      inputStartsWithTool: input[0]?.role === "tool",
    });
    if ("reason" in plan) {
      this.log.warn({ session_id: sessionId, tokens: before.total, budget, reason: plan.reason }, "history over its compaction budget cannot be compacted");
      return built;
    }
    const summarizer = resolved.summarizer ?? built.model;
    let summary: string;
    try {
      const transcript = transcriptOf(view.slice(plan.head, plan.cut));
      summary = await summarize(this.chat, this.storage.sessions, {
        keyHash: request.keyHash,
        model: summarizer,
        transcript,
        maxTokens: plan.summaryCap,
        signal: AbortSignal.timeout(SUMMARY_TIMEOUT_MS),
      });
    } catch (error) {
      this.log.warn(
        { session_id: sessionId, summarizer, err: { message: error instanceof Error ? error.message : String(error) } },
        "compaction failed: the summariser gave no summary; the request goes on uncompacted",
      );
      return built;
    }
    summary = capSummary(summary, plan.summaryCap);
    const compacted: ViewEntry[] = [...view.slice(0, plan.head), { message: summaryMessage(summary), index: SUMMARY_INDEX }, ...view.slice(plan.cut)];
    const rebuilt = buildFrom(request, compacted);
    const after = await estimateWire(wire, rebuilt, resolved, sessionId);
    const checkpoint = await this.record({ request, resolved, view, plan, summary, summarizer, current, before, after, offset, sessionId, parentId });
    this.report(checkpoint, request.keyHash, { plan, current, before: before.total, after: after.total, budget, keptMessages: compacted.length });
    return rebuilt;
  }

  private async record(state: {
    request: CompactionRequest;
    resolved: ResolvedModel;
    view: ViewEntry[];
    plan: Plan;
    summary: string;
    summarizer: string;
    current: Checkpoint | undefined;
    before: WireEstimate;
    after: WireEstimate;
    offset: number;
    sessionId: string;
    parentId: string;
  }): Promise<Checkpoint> {
    const { view, plan, before, offset } = state;
    const turnIds: string[] = [];
    for (let index = plan.head; index < plan.cut; index++) {
      const turnId = before.match.turnIds.get(offset + index);
      if (turnId) turnIds.push(turnId);
    }
    return this.storage.checkpoints.save(
      {
        id: newId("ckpt_"),
        sessionId: state.sessionId,
        anchorResponseId: state.parentId,
        headCount: plan.head,
        // the summary sits after the head, so the first kept message after it is a stored one
        cutIndex: plan.cut < view.length ? view[plan.cut].index : state.request.history.length,
        summary: state.summary,
        summarizer: state.summarizer,
        summarizedMessages: plan.cut - plan.head,
        tokensBefore: before.total,
        tokensAfter: state.after.total,
      },
      // the session row may be gone (`sessions rm`) while the response chain lives on: the store makes it again for the checkpoint
      { turnIds, supersedes: state.current, owner: { keyHash: state.request.keyHash, model: state.resolved.name } },
    );
  }

  /** One event and one log line: counts and sizes, never contents. */
  private report(
    checkpoint: Checkpoint,
    keyHash: string,
    facts: { plan: Plan; current: Checkpoint | undefined; before: number; after: number; budget: number; keptMessages: number },
  ): void {
    const fields = {
      session_id: checkpoint.sessionId,
      checkpoint_id: checkpoint.id,
      response_id: checkpoint.anchorResponseId,
      summarizer: checkpoint.summarizer,
      summarized_messages: checkpoint.summarizedMessages,
      kept_messages: facts.keptMessages,
      archived_turns: checkpoint.archivedTurns,
      superseded_checkpoint: facts.current?.id ?? null,
      summary_chars: checkpoint.summary.length,
      tokens_before: facts.before,
      tokens_after: facts.after,
      budget: facts.budget,
    };
    // the event names the session as its client does; the log line as the store files it (sessions show takes that)
    this.bus.publish(withKey({ type: "session.compacted", ...fields, session_id: sessionName(checkpoint.sessionId) }, keyHash));
    if (facts.after > facts.budget) this.log.warn(fields, "session compacted, but the head and the newest messages alone exceed the budget");
    else this.log.info(fields, "session compacted");
  }
}

function buildFrom(request: CompactionRequest, view: readonly ViewEntry[]): ChatRequest {
  return request.build(view.map((entry) => entry.message));
}

/** Where the history sits in the built request: `build` places the very message objects it was given. */
function historyOffset(built: ChatRequest, view: readonly ViewEntry[]): number {
  const offset = built.messages.indexOf(view[0].message);
  if (offset < 0 || view.some((entry, index) => built.messages[offset + index] !== entry.message))
    throw new Error("compaction: build() must place the history's messages in order");
  return offset;
}

/** A summary longer than its share is cut (it is carrierd's own text, unlike every kept message). */
function capSummary(summary: string, cap: number): string {
  if (priceJson(summaryMessage(summary)) <= cap) return summary;
  let text = summary;
  const cut = () => `${text.trimEnd()} […]`;
  while (text.length > 0 && priceJson(summaryMessage(cut())) > cap) text = text.slice(0, Math.floor(text.length * 0.9));
  return cut();
}
