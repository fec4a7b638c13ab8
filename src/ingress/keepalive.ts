/** An open event stream that may owe its client a keepalive. */
export interface KeepaliveTarget {
  /** Writes a keepalive if the stream has been idle long enough; returns false once the stream is closed. */
  keepalive(now: number): boolean;
}

const SWEEP_MS = 250;
/**
 * The open streams, in an array rather than a Set. A Set that gains and
 * loses an entry per request rebuilds its hash table every few requests,
 * and V8 links each old table to its successor; an old table that lived
 * long enough to reach the old generation kept every later one alive
 * through young-generation GCs. Removal is a search and a swap with the
 * last: at most one per stream, over the streams open at that moment.
 */
const open: KeepaliveTarget[] = [];
let sweeper: NodeJS.Timeout | undefined;

/**
 * One timer for every open event stream's keepalives, rather than an
 * interval per stream: starting and clearing a timer per request showed in
 * the request path's profile, and 1,000 open streams need one timer, not
 * 1,000. A stream is at most one sweep late with its keepalive.
 */
export function watchForKeepalive(target: KeepaliveTarget): () => void {
  open.push(target);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  return () => forget(target);
}

function sweep(): void {
  const now = Date.now();
  // backwards: forgetting a target moves the last one into its place
  for (let index = open.length - 1; index >= 0; index--) {
    const target = open[index];
    if (!target.keepalive(now)) forget(target);
  }
}

function forget(target: KeepaliveTarget): void {
  const index = open.lastIndexOf(target);
  if (index < 0) return;
  const last = open.pop()!;
  if (index < open.length) open[index] = last;
  if (open.length === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}
