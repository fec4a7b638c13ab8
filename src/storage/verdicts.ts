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

/** What a verdict is about: the (provider, host, model, field) an upstream rejected. */
export type VerdictField = Pick<Verdict, "provider" | "host" | "model" | "field">;

/** An upstream's rejection of carrier fields, as VerdictStorage.record keeps it. */
export interface Rejection {
  readonly provider: string;
  readonly host: string;
  readonly model: string;
  readonly fields: readonly string[];
  readonly status: number;
  /** The upstream's error message. */
  readonly message: string;
  /** The session that met it, its key's hash and the model its client asked for (for a session without a row yet). */
  readonly sessionId: string;
  readonly keyHash: string;
  readonly clientModel: string;
}
