import type { IncomingMessage } from "node:http";

/**
 * The headers coding agents name their own session in, read when a request
 * sends no X-Session-Id (docs/api.md#sessions-x-session-id): Claude Code's
 * `x-claude-code-session-id`, Codex's `session-id`. opencode sends
 * `x-session-id`, carrierd's own header. Codex's `prompt_cache_key` holds
 * the same value as its header but is not read: other clients share one
 * cache key across conversations, which would merge them into one session.
 */
const AGENT_SESSION_HEADERS = ["x-claude-code-session-id", "session-id"] as const;

/** What X-Session-Id accepts; an agent's id outside it is not a session name carrierd can keep (it is left unread, never refused). */
const SESSION_NAME = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Whether the agent says it compacted its history, so the session's earlier
 * turns are no longer its conversation's by position (Claude Code's
 * `x-claude-code-context-compacted`; any value but `false` or `0`).
 */
export function contextCompacted(request: IncomingMessage): boolean {
  const value = request.headers["x-claude-code-context-compacted"];
  return typeof value === "string" && value !== "" && value !== "false" && value !== "0";
}

/**
 * The session name a request gives: its X-Session-Id (the server has checked
 * it), else the agent's own session id; undefined when it names none and the
 * session is found by fingerprints.
 */
export function clientSessionName(request: IncomingMessage): string | undefined {
  const named = request.headers["x-session-id"];
  if (typeof named === "string") return named;
  for (const header of AGENT_SESSION_HEADERS) {
    const value = request.headers[header];
    if (typeof value === "string" && SESSION_NAME.test(value)) return value;
  }
  return undefined;
}
