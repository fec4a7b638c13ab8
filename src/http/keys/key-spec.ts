import { OWNER_KEY_NAME } from "./caller.js";
import { KEY_SCOPES, type KeyScope } from "../../storage/keys.js";

/** What `keys create` was asked for, checked; a problem is a sentence for the operator. */
export interface KeySpec {
  readonly name: string;
  readonly scopes: KeyScope[];
  readonly models: string[];
  readonly eventsOf: string[];
  readonly expiresAt: number | null;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkKeySpec(
  input: { name: string; scopes: readonly string[]; models: readonly string[]; eventsOf: readonly string[]; expires: string | undefined },
  now = Date.now(),
): KeySpec | { problem: string } {
  if (!NAME.test(input.name))
    return { problem: `key names are 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit: ${JSON.stringify(input.name)}` };
  if (input.name === OWNER_KEY_NAME) return { problem: `"${OWNER_KEY_NAME}" is the name of the gateway's own key (CARRIERD_API_KEY or the api_key file)` };
  const scopes = [...new Set(input.scopes.length === 0 ? ["chat"] : input.scopes)];
  const unknown = scopes.filter((scope) => !(KEY_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) return { problem: `unknown scope ${unknown.join(", ")}: a key's scopes are ${KEY_SCOPES.join(", ")}` };
  const models = [...new Set(input.models)];
  if (models.some((pattern) => pattern === "" || pattern.length > 256))
    return { problem: "a --models pattern is 1–256 characters (`*` matches any run of characters)" };
  const eventsOf = [...new Set(input.eventsOf)];
  if (eventsOf.some((name) => !NAME.test(name))) return { problem: "--events-of takes key names" };
  let expiresAt: number | null = null;
  if (input.expires !== undefined) {
    expiresAt = Date.parse(input.expires);
    if (Number.isNaN(expiresAt)) return { problem: `--expires takes a date or time (2027-01-31, 2027-01-31T18:00:00Z): ${JSON.stringify(input.expires)}` };
    if (expiresAt <= now) return { problem: `--expires ${input.expires} has already passed` };
  }
  return { name: input.name, scopes: scopes as KeyScope[], models, eventsOf, expiresAt };
}
