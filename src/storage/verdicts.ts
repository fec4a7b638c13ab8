/** One verdict as `verdicts list --json` prints it (docs/sessions-and-replay.md#cli). */
export interface Verdict {
  provider: string;
  /** Hostname without port. */
  host: string;
  /** Upstream model name. */
  model: string;
  field: string;
  /** The upstream's HTTP status. */
  status: number;
  /** The upstream's error message. */
  message: string;
  recorded_at: string;
}
