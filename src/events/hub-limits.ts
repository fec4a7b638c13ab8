/**
 * Back-pressure and liveness limits of the WebSocket hub (docs/events.md#slow-and-dead-subscribers). The
 * defaults suit a dashboard on a LAN; operators (and tests that need a
 * stall to happen quickly) can tune them through the environment.
 */
export interface HubLimits {
  /** Bytes a connection may have queued (beyond the kernel's buffers) before events are dropped for it. */
  readonly maxBufferedBytes: number;
  /** A connection still over `maxBufferedBytes` this long after its first drop is closed with 1013. */
  readonly stallMs: number;
  /** Time an upgraded connection without an Authorization header has to send its auth message. */
  readonly authTimeoutMs: number;
  /** Interval between pings; a peer that missed the previous pong is terminated. */
  readonly pingIntervalMs: number;
  /** Largest message a client may send (auth and subscribe are small). */
  readonly maxPayloadBytes: number;
  /** Live events a resuming connection holds while its backlog is sent; past it the resume ends with a gap notice. */
  readonly maxResumeHeld: number;
}

const DEFAULT_HUB_LIMITS: HubLimits = {
  maxBufferedBytes: 1024 * 1024,
  stallMs: 10_000,
  authTimeoutMs: 5_000,
  pingIntervalMs: 30_000,
  maxPayloadBytes: 64 * 1024,
  maxResumeHeld: 50_000,
};

/** Reads `CARRIERD_EVENTS_BUFFER_BYTES`, `CARRIERD_EVENTS_STALL_MS`, `CARRIERD_EVENTS_AUTH_MS`, `CARRIERD_EVENTS_PING_MS`; bad values fall back to the defaults. */
export function hubLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): HubLimits {
  return {
    ...DEFAULT_HUB_LIMITS,
    maxBufferedBytes: positiveInt(env.CARRIERD_EVENTS_BUFFER_BYTES) ?? DEFAULT_HUB_LIMITS.maxBufferedBytes,
    stallMs: positiveInt(env.CARRIERD_EVENTS_STALL_MS) ?? DEFAULT_HUB_LIMITS.stallMs,
    authTimeoutMs: positiveInt(env.CARRIERD_EVENTS_AUTH_MS) ?? DEFAULT_HUB_LIMITS.authTimeoutMs,
    pingIntervalMs: positiveInt(env.CARRIERD_EVENTS_PING_MS) ?? DEFAULT_HUB_LIMITS.pingIntervalMs,
  };
}

function positiveInt(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : undefined;
}
