/** An open event stream that may owe its client a keepalive. */
export interface KeepaliveTarget {
  /** Writes a keepalive if the stream has been idle long enough; returns false once the stream is closed. */
  keepalive(now: number): boolean;
}

const SWEEP_MS = 250;
const open = new Set<KeepaliveTarget>();
let sweeper: NodeJS.Timeout | undefined;

/**
 * One timer for every open event stream's keepalives, rather than an
 * interval per stream: starting and clearing a timer per request showed in
 * the request path's profile, and 1,000 open streams need one timer, not
 * 1,000. A stream is at most one sweep late with its keepalive.
 */
export function watchForKeepalive(target: KeepaliveTarget): () => void {
  open.add(target);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  return () => forget(target);
}

function sweep(): void {
  const now = Date.now();
  for (const target of open) if (!target.keepalive(now)) forget(target);
}

function forget(target: KeepaliveTarget): void {
  open.delete(target);
  if (open.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}
