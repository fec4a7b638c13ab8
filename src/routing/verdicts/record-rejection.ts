import { withKey, type EventBus } from "../../foundation/event-bus/event-bus.js";
import { sessionName } from "../../conversation/session-scope.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { isCarrierField, type CarrierField } from "../../providers/contract.js";
import type { Storage } from "../../storage/storage.js";
import type { SessionModelConfig } from "../../storage/turns.js";
import { upstreamError } from "../../foundation/errors/gateway-error.js";

export interface VerdictKey {
  readonly provider: string;
  readonly host: string;
  readonly model: string;
}

/** Whether a `rejected_carriers` entry (`[provider, host, model, fields]`) is about this key. */
function isFor(key: VerdictKey, [provider, host, model]: readonly [string, string, string, ...unknown[]]): boolean {
  return provider === key.provider && host === key.host && model === key.model;
}

/** Fields rejected for this key: the verdict table's (as read), plus the session's model config (what `--resume` keeps). */
export function rejectedIn(key: VerdictKey, verdictFields: readonly CarrierField[], config: Readonly<SessionModelConfig> | undefined): CarrierField[] {
  const fields = new Set(verdictFields);
  for (const entry of config?.rejected_carriers ?? []) {
    if (isFor(key, entry)) for (const field of entry[3]) if (isCarrierField(field)) fields.add(field);
  }
  return [...fields];
}

/**
 * Records an unknown-field rejection whose retry the upstream served
 * (docs/sessions-and-replay.md#unknown-field-fallback-verdicts, steps 2 and 3): one verdict per
 * field in SQLite, the same in the session's model config, one
 * `verdict.recorded` event and one log line.
 */
export async function recordRejection(
  services: { storage: Pick<Storage, "verdicts">; bus: EventBus; log: Logger },
  rejection: VerdictKey & { sessionId: string; keyHash: string; clientModel: string; fields: readonly CarrierField[]; status: number; body: string },
): Promise<void> {
  const { storage } = services;
  const message = upstreamError(rejection.status, rejection.body).message;
  // the verdicts, and the same fields in the session's config (its row made when the rejection came before its first turn)
  const recorded = await storage.verdicts.record({ ...rejection, message });
  services.log.warn(
    {
      provider: rejection.provider,
      host: rejection.host,
      model: rejection.model,
      fields: rejection.fields,
      status: rejection.status,
      upstream_message: message,
      session_id: rejection.sessionId,
    },
    `verdict recorded: ${rejection.provider} (${rejection.host}) ${rejection.model} rejects ${rejection.fields.join(", ")}; the retry without it was served`,
  );
  services.bus.publish(
    withKey(
      {
        type: "verdict.recorded",
        // as the client names it (its events do), not as the store files it
        session_id: sessionName(rejection.sessionId),
        provider: rejection.provider,
        host: rejection.host,
        model: rejection.model,
        field: rejection.fields[0],
        fields: rejection.fields,
        status: rejection.status,
        message,
        recorded_at: recorded[0]?.recorded_at,
        retried: true,
      },
      rejection.keyHash,
    ),
  );
}
