import { GatewayError } from "../../foundation/errors/gateway-error.js";
import { globMatches } from "../../routing/routes/glob.js";
import type { KeyScope } from "../../storage/keys.js";

/** The name the owner key (CARRIERD_API_KEY or the api_key file) goes by in metrics and logs; no access key may take it. */
export const OWNER_KEY_NAME = "owner";

/** Who a request comes from: the key it authenticated with, and what that key may open and see. */
export interface Caller {
  /** The key's name (OWNER_KEY_NAME for the owner key): a metrics label, never the secret. */
  readonly name: string;
  /** The owner key: every scope, and it reads every key's responses and events. */
  readonly owner: boolean;
  /** The scope its sessions, fingerprints, responses and conversations are filed under. */
  readonly keyHash: string;
  readonly scopes: ReadonlySet<KeyScope>;
  /** Model globs it may call; empty: every model. */
  readonly models: readonly string[];
  /** The data scopes whose events it sees; undefined: every one (the owner key). */
  readonly eventsOf: ReadonlySet<string> | undefined;
  /** SHA-256 of the secret it presented: a rotation makes the old one stop working, open WebSockets included. */
  readonly secretHash: string;
}

/** Whether the caller may call this model: others are answered as if they did not exist. */
export function mayUseModel(caller: Caller, model: string): boolean {
  return caller.models.length === 0 || caller.models.some((pattern) => globMatches(pattern, model));
}

/**
 * Whether a stored response or conversation is the caller's: the owner key
 * sees every one; a row from before rows had a key (null) is the owner
 * key's, which made all of them.
 */
export function owns(caller: Caller, keyHash: string | null): boolean {
  return caller.owner || keyHash === caller.keyHash;
}

/** Whether the caller sees an event produced under this data scope; an event of no key (routes reloaded) every events key sees. */
export function seesEventsOf(caller: Caller, keyHash: string | undefined): boolean {
  return keyHash === undefined || caller.eventsOf === undefined || caller.eventsOf.has(keyHash);
}

/** A model outside the caller's `--models` is answered exactly as a model routes.yaml does not have. */
export function requireModel(caller: Caller, model: string): void {
  if (!mayUseModel(caller, model)) throw new GatewayError("model_not_found", `The model '${model}' does not exist in routes.yaml`, "model");
}
