import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { afterGatewayCommits, TEST_KEY } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { announceSkipped } from "../support/postgres.js";
import { addKey } from "../keys/keys-support.js";
import { BACKENDS, chat, expectValid, getJson, historyRoutes, kept, sessionValidators, skipBackend, type Backend } from "./history-support.js";

announceSkipped("test/sessions-http/session-list.test.ts", 6);

/**
 * GET /v1/sessions and DELETE /v1/sessions/{id} (docs/api.md#session-history):
 * newest first, cursor pages that neither repeat nor skip, the filters and
 * the text search, bad parameters as 400s naming them, and each key seeing
 * only its own sessions (another key's is a 404, never a 403), on both backends.
 */
type Summary = { id: string; key: string | null; model: string; provider: string; turn_count: number; updated_at: string; preview: string | null };
type Page = { data: Summary[]; has_more: boolean; next_cursor: string | null; first_id: string | null; last_id: string | null };

describe.each(Object.keys(BACKENDS))("session history lists: %s", (backendName) => {
  const skip = skipBackend(backendName);
  const validators = sessionValidators();
  let upstream: OpenAIUpstream;
  let backend: Backend;
  let started: number;
  /** Sessions the owner key made, oldest first: [id, model, first user text, answer]. */
  const made: { id: string; model: string; user: string; answer: string }[] = [];

  beforeAll(async () => {
    if (skip) return;
    upstream = await startOpenAIUpstream();
    backend = await BACKENDS[backendName]!(historyRoutes(upstream));
    started = Date.now();
    const models = ["deepseek/deepseek-chat", "openrouter/qwen/qwen3", "deepseek/deepseek-chat", "deepseek/deepseek-reasoner", "openrouter/qwen/qwen3"];
    for (const [index, model] of models.entries()) {
      const user = index === 3 ? "Where is the Eiffel TOWER?" : `question number ${index}`;
      const first = await chat(backend.gateway, TEST_KEY, { model, messages: [{ role: "user", content: user }] });
      expect(first.status).toBe(200);
      // two turns in the first session: its activity is its newest turn
      if (index === 0) {
        const again = await chat(backend.gateway, TEST_KEY, {
          model,
          messages: [{ role: "user", content: user }, kept(first.message), { role: "user", content: "more" }],
        });
        expect(again.session).toBe(first.session);
      }
      made.push({ id: first.session!, model, user, answer: String(first.message.content) });
    }
    await afterGatewayCommits(backend.gateway);
  });
  afterAll(async () => {
    await backend?.stop();
    await upstream?.close();
  });

  const list = async (query = "", secret = TEST_KEY): Promise<Page> => {
    const { status, body } = await getJson(backend.gateway, secret, `/v1/sessions${query}`);
    expect(status, JSON.stringify(body)).toBe(200);
    expectValid(validators.list, body);
    return body as unknown as Page;
  };

  test.skipIf(skip)("newest first; pages of 2 by cursor cover every session once, in the same order", async () => {
    const all = await list();
    expect(all.data.map((session) => session.id)).toEqual(made.map((session) => session.id).reverse());
    expect(all).toMatchObject({ has_more: false, next_cursor: null, first_id: made.at(-1)!.id, last_id: made[0]!.id });
    expect(all.data.at(-1)).toMatchObject({ key: "owner", model: made[0]!.model, provider: "deepseek", turn_count: 2, preview: "question number 0" });

    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      paged.push(...page.data.map((session) => session.id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(paged).toEqual(all.data.map((session) => session.id));
  });

  test.skipIf(skip)("filters by model and provider, by time (ISO 8601 or epoch ms), and searches user and assistant text, not the JSON around it", async () => {
    const ids = async (query: string) => (await list(query)).data.map((session) => session.id);
    const byModel = made.filter((session) => session.model === "deepseek/deepseek-chat").map((session) => session.id);
    expect(await ids("?model=deepseek/deepseek-chat")).toEqual(byModel.reverse());
    expect(await ids("?provider=openrouter")).toEqual([made[4]!.id, made[1]!.id]);
    expect(await ids("?provider=nobody")).toEqual([]);

    expect(await ids(`?since=${started - 60_000}`)).toHaveLength(made.length);
    expect(await ids(`?since=${new Date(started - 60_000).toISOString()}`)).toHaveLength(made.length);
    expect(await ids(`?until=${Date.now() + 60_000}&since=2020-01-01`)).toHaveLength(made.length);
    expect(await ids(`?since=${Date.now() + 60_000}`)).toEqual([]);
    expect(await ids("?until=2020-01-01T00:00:00Z")).toEqual([]);

    // the user's text, case-insensitively; an answer's text; never the keys of the stored JSON
    expect(await ids("?q=eiffel%20tower")).toEqual([made[3]!.id]);
    expect(await ids(`?q=${encodeURIComponent(made[2]!.answer)}`)).toEqual([made[2]!.id]);
    expect(await ids("?q=role")).toEqual([]);
    expect(await ids("?q=more&model=deepseek/deepseek-chat")).toEqual([made[0]!.id]);
  });

  test.skipIf(skip)("/v1/capabilities says session history is served, and where", async () => {
    const { body } = await getJson(backend.gateway, TEST_KEY, "/v1/capabilities");
    expect(body.features).toMatchObject({ session_history: true });
    expect(body.endpoints).toEqual(expect.arrayContaining(["/v1/sessions", "/v1/sessions/{id}"]));
  });

  test.skipIf(skip)("a bad parameter is a 400 in OpenAI's shape naming it", async () => {
    for (const [query, param] of [
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?limit=ten", "limit"],
      ["?cursor=not-a-cursor", "cursor"],
      ["?since=yesterday", "since"],
      ["?until=2026-13-45", "until"],
      ["?q=", "q"],
      [`?q=${"x".repeat(201)}`, "q"],
    ] as const) {
      const { status, body } = await getJson(backend.gateway, TEST_KEY, `/v1/sessions${query}`);
      expect(status, query).toBe(400);
      expect(body, query).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_request", param } });
    }
  });

  test.skipIf(skip)("a key sees only its own sessions by the name it gave; the owner key sees every key's; another key's is a 404", async () => {
    const a = await addKey(backend.gateway, "client-a");
    const b = await addKey(backend.gateway, "client-b");
    const events = await addKey(backend.gateway, "wall", { scopes: ["events"] });
    const model = "deepseek/deepseek-chat";
    expect((await chat(backend.gateway, a, { model, messages: [{ role: "user", content: "A's question" }] }, "shared-name")).session).toBe("shared-name");
    expect((await chat(backend.gateway, b, { model, messages: [{ role: "user", content: "B's question" }] }, "shared-name")).session).toBe("shared-name");
    await chat(backend.gateway, b, { model, messages: [{ role: "user", content: "B alone" }] }, "b-only");
    await afterGatewayCommits(backend.gateway);

    const ofA = await list("", a);
    expect(ofA.data.map((session) => [session.id, session.key, session.preview])).toEqual([["shared-name", "client-a", "A's question"]]);
    expect((await list("", b)).data.map((session) => session.id)).toEqual(["b-only", "shared-name"]);
    const shown = await getJson(backend.gateway, a, "/v1/sessions/shared-name");
    expect(shown.status).toBe(200);
    expectValid(validators.session, shown.body);
    expect((shown.body.turns as { prompt: unknown }[])[0]!.prompt).toEqual([{ role: "user", content: "A's question" }]);

    for (const method of ["GET", "DELETE"]) {
      const refused = await getJson(backend.gateway, a, "/v1/sessions/b-only", method);
      expect(refused.status, method).toBe(404);
      expect(refused.body).toEqual({
        error: { message: "No session with id 'b-only' found.", type: "invalid_request_error", param: "id", code: "session_not_found" },
      });
    }
    expect((await getJson(backend.gateway, events, "/v1/sessions")).body).toMatchObject({ error: { code: "insufficient_scope" } });

    // the owner key: every key's sessions, an access key's as NAME~SCOPE, with the key's name
    const everyone = await list("?limit=100");
    const foreign = everyone.data.filter((session) => session.key === "client-a" || session.key === "client-b");
    expect(foreign.map((session) => session.key).sort()).toEqual(["client-a", "client-b", "client-b"]);
    for (const session of foreign) expect(session.id).toMatch(/^(shared-name|b-only)~[A-Za-z0-9_-]+$/);
    expect(everyone.data).toHaveLength(made.length + 3);
    const bOnly = foreign.find((session) => session.id.startsWith("b-only~"))!;
    expect((await getJson(backend.gateway, TEST_KEY, `/v1/sessions/${encodeURIComponent(bOnly.id)}`)).status).toBe(200);
    // the owner's bare name is its own session of that name, not another key's
    expect((await getJson(backend.gateway, TEST_KEY, "/v1/sessions/b-only")).status).toBe(404);
  });

  test.skipIf(skip)("DELETE removes the session and its turns; then it is a 404 and gone from the list", async () => {
    const c = await addKey(backend.gateway, "client-c");
    const model = "deepseek/deepseek-chat";
    const asked = [{ role: "user", content: "to forget" }];
    const doomed = await chat(backend.gateway, c, { model, messages: asked }, "doomed");
    await afterGatewayCommits(backend.gateway);
    const deleted = await getJson(backend.gateway, c, "/v1/sessions/doomed", "DELETE");
    expect(deleted).toEqual({ status: 200, body: { id: "doomed", object: "session.deleted", deleted: true } });
    expect((await getJson(backend.gateway, c, "/v1/sessions/doomed")).status).toBe(404);
    expect((await getJson(backend.gateway, c, "/v1/sessions/doomed", "DELETE")).status).toBe(404);
    expect((await list("", c)).data).toEqual([]);
    // its turns are gone from replay too: the same history resent finds nothing to send back
    const resent = await chat(backend.gateway, c, { model, messages: [...asked, kept(doomed.message), { role: "user", content: "again" }] });
    expect(resent.status).toBe(200);
    expect(upstream.requestsFor("deepseek").at(-1)!.body.messages[1]).not.toHaveProperty("reasoning_content");
    await afterGatewayCommits(backend.gateway);
    const fresh = await getJson(backend.gateway, c, `/v1/sessions/${resent.session!}`);
    expect((fresh.body.turns as { replay: { matched: unknown[] } }[])[0]!.replay.matched).toEqual([]);
    // the owner key deletes another key's session by its stored id
    const victim = made[1]!.id;
    expect((await getJson(backend.gateway, TEST_KEY, `/v1/sessions/${victim}`, "DELETE")).status).toBe(200);
    expect((await list("?limit=100")).data.map((session) => session.id)).not.toContain(victim);
  });
});
