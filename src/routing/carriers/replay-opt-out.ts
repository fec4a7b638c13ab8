import { GatewayError } from "../../foundation/errors/gateway-error.js";
import { CARRIER_FIELDS, isCarrierField, type CarrierField, type ChatRequest } from "../../providers/contract.js";
import { isRecord } from "../../foundation/util/json-readers.js";

/**
 * The per-request opt-out of replay rule 2 (docs/sessions-and-replay.md#replay-rules), carrierd's own request option:
 * `model_options.replay: false` withholds every carrier field from this
 * request; `model_options.replay: {omit: ["reasoning_details", …]}` withholds
 * the named ones. Never sent upstream.
 */
export function replayOptOut(request: ChatRequest): CarrierField[] {
  const replay = request.model_options?.replay;
  if (replay === undefined || replay === true) return [];
  if (replay === false) return [...CARRIER_FIELDS];
  const omit = isRecord(replay) ? replay.omit : undefined;
  if (Array.isArray(omit) && omit.every(isCarrierField)) return omit;
  throw new GatewayError(
    "invalid_request",
    `invalid value for 'model_options.replay': must be true, false, or {"omit": [${CARRIER_FIELDS.map((field) => `"${field}"`).join(", ")}]}`,
    "model_options.replay",
  );
}
