import type { UpstreamDeadlines } from "../contract.js";

/** Which deadline passed, by its routes.yaml name. */
export type DeadlineName = "first_byte" | "idle" | "total";

/** One upstream exchange as the watch sees it. */
export interface Watched {
  readonly deadlines: UpstreamDeadlines;
  /** performance.now() when the request was sent. */
  readonly sentAt: number;
  /** performance.now() of the last read of the answer; 0 until its head arrived. */
  lastReadAt: number;
  /** True while carrierd holds the stream for a slow client: the upstream is not idle then, carrierd is. */
  paused: boolean;
  /** Called once, when a deadline passed; the exchange aborts itself. */
  expire(name: DeadlineName): void;
}

/** How often open exchanges are checked: a deadline passes at most this late. */
const SWEEP_MS = 50;
/**
 * The exchanges in flight, in an array (removal is a swap with the last),
 * checked by one shared interval: a timer per request, re-armed per network
 * read, showed in the request path's profile (see keepalive.ts). Each read
 * only stores a clock reading.
 */
const open: Watched[] = [];
let sweeper: NodeJS.Timeout | undefined;

/** Watches `exchange` until the returned function is called. */
export function watchDeadlines(exchange: Watched): () => void {
  open.push(exchange);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  return () => forget(exchange);
}

/** The deadline `exchange` has passed at `now`, if any. */
export function passedDeadline(exchange: Watched, now: number): DeadlineName | undefined {
  const { deadlines, sentAt, lastReadAt } = exchange;
  if (now - sentAt >= deadlines.totalMs) return "total";
  if (lastReadAt === 0) return now - sentAt >= deadlines.firstByteMs ? "first_byte" : undefined;
  if (exchange.paused) {
    exchange.lastReadAt = now; // idle time counts again from the resume
    return undefined;
  }
  return now - lastReadAt >= deadlines.idleMs ? "idle" : undefined;
}

function sweep(): void {
  const now = performance.now();
  for (let index = open.length - 1; index >= 0; index--) {
    const exchange = open[index];
    const passed = passedDeadline(exchange, now);
    if (passed) {
      forget(exchange);
      exchange.expire(passed);
    }
  }
}

function forget(exchange: Watched): void {
  const index = open.lastIndexOf(exchange);
  if (index < 0) return;
  const last = open.pop()!;
  if (index < open.length) open[index] = last;
  if (open.length === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** What the client is told when `name` passed, naming the routes.yaml key that sets it. */
export function deadlineMessage(provider: string, name: DeadlineName, deadlines: UpstreamDeadlines): string {
  const seconds = (ms: number) => `${ms / 1000} s`;
  switch (name) {
    case "first_byte":
      return `upstream ${provider} did not start answering within ${seconds(deadlines.firstByteMs)} (providers.${provider}.deadlines.first_byte)`;
    case "idle":
      return `upstream ${provider} sent nothing for ${seconds(deadlines.idleMs)} mid-answer (providers.${provider}.deadlines.idle)`;
    case "total":
      return `upstream ${provider} did not finish its answer within ${seconds(deadlines.totalMs)} (providers.${provider}.deadlines.total)`;
  }
}
