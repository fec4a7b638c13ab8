import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EndpointTable, type Endpoint } from "../../src/http/endpoint-table.js";
import { gatewayEndpoints } from "../../src/gateway/endpoints.js";
import { openAIErrorShape } from "../../src/ingress/chat-completions/errors.js";
import { anthropicErrorShape } from "../../src/ingress/messages/errors.js";
import { googleErrorShape } from "../../src/ingress/gemini/errors.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";

const row = (method: string, path: string): Endpoint => ({ method, path, auth: true, handler: () => undefined });

describe("the endpoint table", () => {
  const compact = row("POST", "/v1/responses/compact");
  const get = row("GET", "/v1/responses/{id}");
  const remove = row("DELETE", "/v1/responses/{id}");
  const items = row("GET", "/v1/responses/{id}/input_items");
  const health = row("*", "/health");
  const table = new EndpointTable([compact, get, remove, items, health], openAIErrorShape);

  test("a request finds its row by method and path, with the path's {name} segments decoded", () => {
    expect(table.match("GET", "/v1/responses/resp%5F1")).toEqual({ kind: "found", endpoint: get, params: { id: "resp_1" } });
    expect(table.match("GET", "/v1/responses/resp_1/input_items")).toEqual({ kind: "found", endpoint: items, params: { id: "resp_1" } });
    expect(table.match("HEAD", "/health")).toEqual({ kind: "found", endpoint: health, params: {} });
  });

  test("a literal row is found by its method; a {name} row still serves that path for other methods", () => {
    expect(table.match("POST", "/v1/responses/compact")).toMatchObject({ kind: "found", endpoint: compact });
    expect(table.match("GET", "/v1/responses/compact")).toEqual({ kind: "found", endpoint: get, params: { id: "compact" } });
  });

  test("a path served under other methods is a wrong method, naming every method it is served with", () => {
    expect(table.match("PUT", "/v1/responses/compact")).toEqual({
      kind: "wrong-method",
      path: "/v1/responses/compact",
      allowed: ["POST", "GET", "DELETE"],
      served: expect.objectContaining({ path: "/v1/responses/compact" }) as unknown,
    });
    expect(table.match("POST", "/v1/responses/resp_1")).toEqual({
      kind: "wrong-method",
      path: "/v1/responses/{id}",
      allowed: ["GET", "DELETE"],
      served: expect.objectContaining({ path: "/v1/responses/{id}" }) as unknown,
    });
  });

  test("a {name} segment never matches empty, across a slash, or undecodable", () => {
    for (const path of ["/v1/responses/", "/v1/responses/a%2Fb", "/v1/responses/%E0%A4%A", "/v1/responses/a/b", "/v1/responses"]) {
      expect(table.match("GET", path), path).toEqual({ kind: "none" });
    }
  });

  test("a {name}:verb segment takes the name before the verb, and only with that verb", () => {
    const generate = row("POST", "/v1beta/models/{model}:generateContent");
    const count = row("POST", "/v1beta/models/{model}:countTokens");
    const google = new EndpointTable([generate, count], openAIErrorShape);
    expect(google.match("POST", "/v1beta/models/gemini-3.1-pro-preview:generateContent")).toEqual({
      kind: "found",
      endpoint: generate,
      params: { model: "gemini-3.1-pro-preview" },
    });
    expect(google.match("POST", "/v1beta/models/a%3Ab:countTokens")).toEqual({ kind: "found", endpoint: count, params: { model: "a:b" } });
    expect(google.match("GET", "/v1beta/models/m:countTokens")).toMatchObject({ kind: "wrong-method", allowed: ["POST"] });
    for (const path of ["/v1beta/models/:generateContent", "/v1beta/models/m:embedContent", "/v1beta/models/m", "/v1beta/models/m:generateContentX"])
      expect(google.match("POST", path), path).toEqual({ kind: "none" });
    expect(() => new EndpointTable([row("POST", "/v1/{model}generate")], openAIErrorShape)).toThrow(/':verb'/);
  });

  test("upgrades are found by a row's plain path only", () => {
    const upgrade = () => undefined;
    const withSocket = new EndpointTable([{ ...row("GET", "/v1/events"), upgrade }, row("GET", "/v1/models")], openAIErrorShape);
    expect(withSocket.upgradeAt("/v1/events")).toBe(upgrade);
    expect(withSocket.upgradeAt("/v1/models")).toBeUndefined();
    expect(withSocket.upgradeAt("/v1/nothing")).toBeUndefined();
    expect(() => new EndpointTable([{ ...row("GET", "/v1/events/{id}"), upgrade }], openAIErrorShape)).toThrow(/needs a plain path/);
  });
});

describe("the gateway serves its table and nothing else", () => {
  let gateway: TestGateway;
  let rows: Endpoint[];
  beforeAll(async () => {
    gateway = await startTestGateway({ routes: DEMO_ROUTES });
    rows = gatewayEndpoints(gateway.container);
  });
  afterAll(() => gateway.stop());

  const concrete = (path: string) => path.replace("{id}", "resp_none");

  test("every path of the table, asked with a method it does not list, is a 405 naming the ones it does (401 first without the key)", async () => {
    const paths = [...new Set(rows.filter((endpoint) => endpoint.method !== "*").map((endpoint) => endpoint.path))];
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      const methods = rows.filter((endpoint) => endpoint.path === path).map((endpoint) => endpoint.method);
      expect((await fetch(`${gateway.url}${concrete(path)}`, { method: "PATCH" })).status, path).toBe(401);
      const refused = await gateway.fetch(concrete(path), { method: "PATCH" });
      expect(refused.status, path).toBe(405);
      // in the error shape of the path's wire API: OpenAI's, Anthropic's on the Messages API's paths, Google's on the Gemini API's
      const shape = rows.find((endpoint) => endpoint.path === path)!.errorShape;
      expect((await refused.json()) as object, path).toMatchObject(
        shape === anthropicErrorShape
          ? { type: "error", error: { type: "invalid_request_error" } }
          : shape === googleErrorShape
            ? { error: { code: 405, status: "UNIMPLEMENTED" } }
            : { error: { code: "method_not_allowed", type: "invalid_request_error" } },
      );
      // a literal path can also be served by a {name} row (GET /v1/responses/compact is a response id)
      expect(refused.headers.get("allow")!.split(", "), path).toEqual(expect.arrayContaining(methods));
    }
  });

  test("a path the table does not hold is a 404 with the key and a 401 without it", async () => {
    expect((await fetch(`${gateway.url}/v1/responses/a/b`)).status).toBe(401);
    const missing = await gateway.fetch("/v1/responses/a/b");
    expect(missing.status).toBe(404);
    expect((await missing.json()) as object).toMatchObject({ error: { code: "not_found" } });
  });

  test("a probe answers any method without a key, before the X-Session-Id check", async () => {
    for (const method of ["GET", "POST", "HEAD"]) {
      const response = await fetch(`${gateway.url}/health`, { method, headers: { "x-session-id": "not a session id" } });
      expect(response.status, method).toBe(200);
    }
    expect((await gateway.fetch("/v1/models", { headers: { "x-session-id": "not a session id" } })).status).toBe(400);
  });

  test("metrics label a request by its row's path, never by the id in the URL", async () => {
    expect((await gateway.fetch("/v1/responses/resp_label_check")).status).toBe(404);
    const text = await (await gateway.fetch("/metrics")).text();
    expect(text).toContain('carrierd_http_requests_total{method="GET",route="/v1/responses/{id}",status="404",key="owner"} 1');
    expect(text).not.toContain("resp_label_check");
  });

  /** Writes raw bytes to the gateway's port and returns everything it answers before closing. */
  function rawExchange(bytes: string): Promise<string> {
    const { hostname, port } = new URL(gateway.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(bytes));
      let answer = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (answer += chunk));
      socket.on("close", () => resolve(answer));
      socket.on("error", reject);
    });
  }

  test("a request target no URL can be made of is a 400, as a request and as an upgrade, and the gateway stays up", async () => {
    const asked = await rawExchange(`GET //[ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.key}\r\nConnection: close\r\n\r\n`);
    expect(asked).toMatch(/^HTTP\/1\.1 400 /);
    expect(asked).toContain('"code":"invalid_request"');
    const upgraded = await rawExchange(
      "GET //[ HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    expect(upgraded).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });
});
