import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { gatewayEndpoints } from "../../src/gateway/endpoints.js";
import { KEY_SCOPES } from "../../src/storage/keys.js";
import { DEMO_ROUTES, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { eventsUrl, upgradeStatus } from "../events/ws-client.js";
import { addKey, bearer, keyRingOf } from "./keys-support.js";

/**
 * Every row of the endpoint table × every scope × {valid, wrong scope,
 * revoked, expired, unknown}, generated from the table itself: a row added
 * later is covered without touching this file.
 */
let gateway: TestGateway;
const secrets = new Map<string, string>();
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
  for (const scope of KEY_SCOPES) secrets.set(scope, await addKey(gateway, `only-${scope}`, { scopes: [scope] }));
  secrets.set("revoked", await addKey(gateway, "revoked", { scopes: [...KEY_SCOPES] }));
  await storageOf(gateway).keys.update({ revoke: "revoked" });
  // `keys create` refuses a past date; the store takes one, as if the date had passed since
  secrets.set("expired", await addKey(gateway, "expired", { scopes: [...KEY_SCOPES], expiresAt: Date.now() - 1000 }));
  await keyRingOf(gateway).refresh();
  secrets.set("unknown", "ck_not-a-key-anyone-was-given");
});
afterAll(() => gateway?.stop());

const rows = () => gatewayEndpoints(gateway.container);

const ANTHROPIC_TYPES: Record<string, string> = { permission_error: "insufficient_scope", authentication_error: "invalid_api_key" };
const GOOGLE_STATUSES: Record<string, string> = { PERMISSION_DENIED: "insufficient_scope", UNAUTHENTICATED: "invalid_api_key" };

/** A request for a row: `{name}` segments filled in, a body where the method takes one. */
async function ask(row: { method: string; path: string }, secret: string | undefined): Promise<{ status: number; code: string | null }> {
  const path = row.path.replaceAll(/\{[^}]+\}/g, "resp_nothing");
  const method = row.method === "*" ? "GET" : row.method;
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...(secret ? bearer(secret) : {}), ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    body:
      method === "POST"
        ? JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }], input: "hi", previous_response_id: "resp_nothing" })
        : undefined,
  });
  const text = await response.text();
  let code: string | null = null;
  try {
    const body = JSON.parse(text) as { type?: string; error?: { code?: string | number; type?: string; status?: string } };
    // the Messages API's rows answer in Anthropic's shape, where the type says what OpenAI's code says; the Gemini API's in Google's, where the status does
    if (body.type === "error") code = ANTHROPIC_TYPES[body.error?.type ?? ""] ?? null;
    else if (typeof body.error?.code === "number") code = GOOGLE_STATUSES[body.error.status ?? ""] ?? null;
    else code = body.error?.code ?? null;
  } catch {
    // a page or metrics text
  }
  return { status: response.status, code };
}

/** Opens /v1/events and authenticates by message (as a browser does): the server's close code, or 1000 when it answered a ping. */
function byMessage(secret: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(eventsUrl(gateway));
    ws.on("open", () => {
      ws.send(JSON.stringify({ type: "auth", key: secret }));
      ws.send(JSON.stringify({ type: "ping" }));
    });
    ws.on("message", (data) => {
      if ((JSON.parse(data.toString()) as { type?: string }).type === "pong") {
        ws.close();
        resolve(1000);
      }
    });
    ws.on("close", (code) => resolve(code));
    ws.on("error", reject);
  });
}

describe("every endpoint × every key", () => {
  test("the table has a scope on every row but the probes", () => {
    for (const row of rows()) if (!row.probe) expect(row.scope, `${row.method} ${row.path}`).toBeDefined();
    expect(rows().filter((row) => row.auth).length).toBeGreaterThanOrEqual(10);
  });

  test("rows the server authenticates: the owner and a key of the row's scope pass, another scope is a 403, revoked / expired / unknown / none a 401", async () => {
    const failures: string[] = [];
    for (const row of rows().filter((candidate) => candidate.auth)) {
      const label = `${row.method} ${row.path}`;
      const owner = await ask(row, gateway.key);
      if (owner.status === 401 || owner.status === 403) failures.push(`${label}: owner got ${owner.status}`);
      for (const scope of KEY_SCOPES) {
        const answer = await ask(row, secrets.get(scope));
        if (scope === row.scope) {
          // the handler answered, as it answers the owner
          if (answer.status !== owner.status) failures.push(`${label}: ${scope} key got ${answer.status}, the owner ${owner.status}`);
        } else if (answer.status !== 403 || answer.code !== "insufficient_scope") {
          failures.push(`${label}: ${scope} key got ${answer.status} ${answer.code}, not 403 insufficient_scope`);
        }
      }
      for (const invalid of ["revoked", "expired", "unknown"]) {
        const answer = await ask(row, secrets.get(invalid));
        if (answer.status !== 401 || answer.code !== "invalid_api_key") failures.push(`${label}: ${invalid} key got ${answer.status} ${answer.code}`);
      }
      const none = await ask(row, undefined);
      if (none.status !== 401) failures.push(`${label}: no key got ${none.status}`);
    }
    expect(failures).toEqual([]);
  });

  test("rows that take upgrades: the header key needs the row's scope (403), a revoked / expired / unknown one is a 401", async () => {
    const failures: string[] = [];
    const upgrades = rows().filter((candidate) => candidate.upgrade);
    expect(upgrades.length).toBeGreaterThan(0);
    for (const row of upgrades) {
      const status = (secret: string) => upgradeStatus(gateway, bearer(secret));
      if ((await status(gateway.key)) !== 101) failures.push(`${row.path}: owner refused`);
      for (const scope of KEY_SCOPES) {
        const got = await status(secrets.get(scope)!);
        const want = scope === row.scope ? 101 : 403;
        if (got !== want) failures.push(`${row.path}: ${scope} key got ${got}, wanted ${want}`);
      }
      for (const invalid of ["revoked", "expired", "unknown"]) {
        const got = await status(secrets.get(invalid)!);
        if (got !== 401) failures.push(`${row.path}: ${invalid} key got ${got}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test("the same by auth message (browsers): a key of another scope closes with 4403, a revoked / expired / unknown one with 4401", async () => {
    expect(await byMessage(gateway.key)).toBe(1000);
    expect(await byMessage(secrets.get("events")!)).toBe(1000);
    expect(await byMessage(secrets.get("chat")!)).toBe(4403);
    expect(await byMessage(secrets.get("admin")!)).toBe(4403);
    for (const invalid of ["revoked", "expired", "unknown"]) expect(await byMessage(secrets.get(invalid)!)).toBe(4401);
  });

  test("the dashboard page holds no data and is served to anyone; what it shows comes over /v1/events, checked above", async () => {
    const dashboard = rows().find((row) => row.path === "/dashboard")!;
    expect(dashboard.auth).toBe(false);
    expect(dashboard.scope).toBe("events");
    for (const secret of [undefined, ...secrets.values()]) expect((await ask(dashboard, secret)).status).toBe(200);
  });

  test("an unknown path needs a valid key of any scope before it is a 404", async () => {
    for (const scope of KEY_SCOPES) expect((await ask({ method: "GET", path: "/v1/nothing-here" }, secrets.get(scope))).status).toBe(404);
    for (const invalid of ["revoked", "expired", "unknown"])
      expect((await ask({ method: "GET", path: "/v1/nothing-here" }, secrets.get(invalid))).status).toBe(401);
  });
});
