import type { ServerResponse } from "node:http";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { Caller } from "../../http/keys/caller.js";
import { sendJson } from "../../http/respond.js";
import { ListDeadlineError, type SessionQuery, type SessionSummary } from "../../storage/sessions.js";
import type { Storage } from "../../storage/storage.js";
import { sessionName, storedSessionId } from "../../conversation/session-scope.js";
import { ListGate } from "./list-gate.js";
import { cursorAfter, parseListQuery } from "./list-query.js";
import { sessionDetail, sessionSummary, type ViewContext } from "./session-view.js";

/**
 * Session history over HTTP (docs/api.md#session-history): list, show and
 * delete, each key its own sessions only. An access key addresses a
 * session by its name (what X-Session-Id carries) and another key's is a
 * 404 as if it did not exist; the owner key sees every key's, an access
 * key's by its stored id `name~scope`, as the CLI shows it.
 */
export class SessionHistoryApi {
  constructor(
    private readonly storage: Pick<Storage, "sessions" | "verdicts">,
    private readonly keyNameOf: (keyHash: string) => string | undefined,
    private readonly gate = new ListGate(),
  ) {}

  async list(params: URLSearchParams, response: ServerResponse, caller: Caller): Promise<void> {
    const query = parseListQuery(params, caller.owner ? undefined : caller.keyHash);
    // one more than asked: whether there is a page after this one
    const found = await this.gate.run(caller.keyHash, (deadline) => this.listed({ ...query, limit: query.limit + 1, deadline }));
    const page = found.slice(0, query.limit);
    const last = page.at(-1);
    const view = this.viewFor(caller);
    const data = page.map((session) => sessionSummary(session, view));
    sendJson(response, 200, {
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: found.length > query.limit,
      next_cursor: found.length > query.limit && last ? cursorAfter(last.updatedAt, last.id) : null,
    });
  }

  private async listed(query: SessionQuery): Promise<SessionSummary[]> {
    try {
      return await this.storage.sessions.list(query);
    } catch (error) {
      if (!(error instanceof ListDeadlineError)) throw error;
      throw new GatewayError(
        "history_timeout",
        "the session list searched longer than it may and was stopped; narrow it (since, until, model, provider) or search for a longer text",
      );
    }
  }

  async get(id: string, response: ServerResponse, caller: Caller): Promise<void> {
    const session = await this.storage.sessions.show(this.storedId(id, caller));
    if (!session || !this.sees(caller, session)) throw notFound(id);
    // the verdicts in force date the fields a turn's replay left out; turns from before the decision was recorded need none
    const verdicts = session.turnList.some((turn) => turn.audit !== undefined) ? await this.storage.verdicts.list() : [];
    sendJson(response, 200, sessionDetail(session, this.viewFor(caller), verdicts));
  }

  async delete(id: string, response: ServerResponse, caller: Caller): Promise<void> {
    // an access key's id is filed under its own scope, so it can only ever name one of its own sessions
    if (!(await this.storage.sessions.remove(this.storedId(id, caller)))) throw notFound(id);
    sendJson(response, 200, { id, object: "session.deleted", deleted: true });
  }

  /** The stored id a caller's id names: an access key's names are filed under its scope; the owner key's ids are stored ids. */
  private storedId(id: string, caller: Caller): string {
    return caller.owner ? id : storedSessionId(id, caller.keyHash);
  }

  private sees(caller: Caller, session: SessionSummary): boolean {
    return caller.owner || session.keyHash === caller.keyHash;
  }

  private viewFor(caller: Caller): ViewContext {
    return { idOf: caller.owner ? (storedId) => storedId : sessionName, keyNameOf: this.keyNameOf };
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError("session_not_found", `No session with id '${id.length > 140 ? `${id.slice(0, 140)}…` : id}' found.`, "id");
}
