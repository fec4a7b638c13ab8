/**
 * How carrierd's own envelope (src/routing/carriers/envelope.ts) is told
 * apart from a provider's signature where a client sends it back: its
 * format's version leads it. A carried body takes an envelope off before it
 * goes upstream (docs/api.md#carried-requests): no provider can read one.
 */
export const ENVELOPE_PREFIX = "cd1.";

/** Whether a value a client sent is carrierd's envelope (not whether it opens). */
export function isCarrierEnvelope(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(ENVELOPE_PREFIX);
}
