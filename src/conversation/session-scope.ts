/**
 * Whose a session is (docs/sessions-and-replay.md, "Whose a session is").
 * A session belongs to the key that created it, and its identity is the
 * pair (key, name): the name is what the client sends and gets back as
 * X-Session-Id, and the store files an access key's session as
 * `name~scope` (the key's data scope). The same name under two keys is two
 * sessions, so a key that names another key's session reaches a session
 * of its own (new, if it has none of that name), exactly as for a name
 * that exists nowhere. The owner key's sessions keep their bare name, as
 * every session did before access keys. `~` is outside the characters a
 * client may send, so no name can pose as another key's stored id.
 */
const SCOPE_MARK = "~";

/** Who names a session: an access key names it under its data scope, the owner key without one. */
export interface SessionNamer {
  readonly owner: boolean;
  readonly keyHash: string;
}

/** The scope a key's session names are filed under; undefined for the owner key. */
export function sessionScopeOf(namer: SessionNamer): string | undefined {
  return namer.owner ? undefined : namer.keyHash;
}

/** The stored id of the session a key calls `name`. */
export function storedSessionId(name: string, scope: string | undefined): string {
  return scope === undefined ? name : `${name}${SCOPE_MARK}${scope}`;
}

/** The name a client knows a stored session by (what X-Session-Id carries). */
export function sessionName(storedId: string): string {
  const mark = storedId.indexOf(SCOPE_MARK);
  return mark < 0 ? storedId : storedId.slice(0, mark);
}

/** The scope a stored session id carries: a branch of it is filed under the same key. */
export function scopeOfStored(storedId: string): string | undefined {
  const mark = storedId.indexOf(SCOPE_MARK);
  return mark < 0 ? undefined : storedId.slice(mark + 1);
}
