import { afterAll, beforeAll, expect, test } from "vitest";
import type { Endpoint } from "../../src/http/endpoint-table.js";
import { gatewayEndpoints } from "../../src/gateway/endpoints.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";
import { codeSpans, readDoc, section, tableRows } from "./markdown.js";

/**
 * docs/api.md, "Endpoints", against the endpoint table the gateway serves
 * (src/gateway/endpoints.ts, built from a running gateway's container):
 * the same rows, with the same method and key scope.
 */
const TABLE = 'docs/api.md, section "Endpoints"';
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

const keyOf = (endpoint: Endpoint) => (endpoint.auth || endpoint.upgrade ? (endpoint.scope ?? "none") : "none");
const methodOf = (endpoint: Endpoint) => (endpoint.method === "*" ? "any" : endpoint.method);
const rowFor = (endpoint: Endpoint) =>
  `| ${methodOf(endpoint) === "any" ? "any" : `\`${endpoint.method}\``} | \`${endpoint.path}\` | \`${keyOf(endpoint)}\` | what it does |`;

function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const cells of tableRows(section(readDoc("docs/api.md"), "Endpoints"))) {
    const method = codeSpans(cells[0] ?? "")[0] ?? (cells[0] ?? "").trim();
    rows.set(`${method} ${codeSpans(cells[1] ?? "")[0] ?? ""}`, codeSpans(cells[2] ?? "")[0] ?? "");
  }
  return rows;
}

test("every endpoint the gateway serves has a row with its key scope", () => {
  const rows = documented();
  const problems = gatewayEndpoints(gateway.container).flatMap((endpoint) => {
    const key = rows.get(`${methodOf(endpoint)} ${endpoint.path}`);
    if (key === undefined) return [`${TABLE} lacks ${methodOf(endpoint)} ${endpoint.path}: add the row ${rowFor(endpoint)}`];
    if (key !== keyOf(endpoint))
      return [`${TABLE}: ${methodOf(endpoint)} ${endpoint.path} says key \`${key}\`; the table in src/gateway/endpoints.ts needs \`${keyOf(endpoint)}\``];
    return [];
  });
  expect(problems).toEqual([]);
});

test("every documented endpoint is served", () => {
  const served = new Set(gatewayEndpoints(gateway.container).map((endpoint) => `${methodOf(endpoint)} ${endpoint.path}`));
  const stale = [...documented().keys()].filter((row) => !served.has(row));
  expect(stale.map((row) => `${TABLE} has a row for ${row}, which src/gateway/endpoints.ts does not serve: remove it`)).toEqual([]);
});
