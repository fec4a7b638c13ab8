import type { ChatMessage } from "../../providers/contract.js";

/** Share of the budget a summary may take; the summariser's `max_tokens` and the summary's cap. */
export const SUMMARY_SHARE = 0.1;
/** After compaction the request should fill at most this share of the budget, so the next turns do not compact again at once. */
export const AFTER_SHARE = 0.5;
const MIN_SUMMARY_TOKENS = 64;
const MAX_SUMMARY_TOKENS = 4096;

export interface PlanInput {
  /** The history as the request would send it (a previous checkpoint's summary included). */
  readonly roles: readonly ChatMessage["role"][];
  /** Wire price of each history message (priceJson of the replayed message). */
  readonly costs: readonly number[];
  /** Wire price of everything else in the request: instructions, the new input, tools. */
  readonly fixed: number;
  /** compact_at × context_window. */
  readonly budget: number;
  /** The new input begins with tool results: the assistant call they answer must stay in the tail. */
  readonly inputStartsWithTool: boolean;
}

export interface Plan {
  /** History messages kept at the start: leading system messages and the first user message. */
  readonly head: number;
  /** First history message kept after the summary; history.length keeps none. */
  readonly cut: number;
  readonly summaryCap: number;
  readonly tailCost: number;
}

/**
 * Where to cut (the tail walk). Keeps the head, and from the end back as
 * many messages as fit in the tail's share, cutting only where no tool
 * result would lose the call it answers. When not even the newest message
 * fits, the smallest valid tail is kept: a compaction that cannot reach the
 * target still gets as close as one pass can, and never loops.
 */
export function planCompaction(input: PlanInput): Plan | { readonly reason: string } {
  const { roles, costs } = input;
  const firstUser = roles.indexOf("user");
  if (firstUser < 0) return { reason: "the history has no user message to keep as its head" };
  const head = firstUser + 1;
  const headCost = sum(costs, 0, head);
  const summaryCap = Math.min(MAX_SUMMARY_TOKENS, Math.max(MIN_SUMMARY_TOKENS, Math.floor(input.budget * SUMMARY_SHARE)));
  const tailTarget = Math.floor(input.budget * AFTER_SHARE) - input.fixed - headCost - summaryCap;
  const length = roles.length;
  const valid = (index: number) => (index < length ? roles[index] !== "tool" : !input.inputStartsWithTool);

  let cut: number | undefined;
  let cutTail = 0;
  let tail = 0;
  for (let index = length; index > head; index--) {
    if (index < length) tail += costs[index];
    if (cut !== undefined && tail > tailTarget) break;
    if (valid(index)) {
      cut = index;
      cutTail = tail;
    }
  }
  if (cut === undefined) return { reason: "no place to cut that keeps every tool result with its call" };
  return { head, cut, summaryCap, tailCost: cutTail };
}

function sum(values: readonly number[], from: number, to: number): number {
  let total = 0;
  for (let index = from; index < to; index++) total += values[index];
  return total;
}
