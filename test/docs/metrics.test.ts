import { afterAll, beforeAll, expect, test } from "vitest";
import { METRICS } from "../../src/foundation/container/tokens.js";
import type { GatewayMetrics } from "../../src/operations/metrics/gateway-metrics.js";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";
import { codeSpans, readDoc, section, tableRows } from "./markdown.js";

/**
 * docs/events.md, "`GET /metrics`", against the metrics a running gateway
 * registers (src/operations/metrics): every carrierd metric has a row with its type
 * and labels, and every row's metric exists. prom-client's default process
 * metrics are one row of their own (`process_*`, `nodejs_*`).
 */
const TABLE = 'docs/events.md, section "`GET /metrics`"';
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway.stop());

interface Metric {
  name: string;
  type: string;
  labels: string[];
}

async function registered(): Promise<Metric[]> {
  const { registry } = gateway.container.resolve<GatewayMetrics>(METRICS);
  const labels = new Map(registry.getMetricsAsArray().map((metric) => [metric.name, (metric as { labelNames?: string[] }).labelNames ?? []]));
  return (await registry.getMetricsAsJSON())
    .filter((metric) => metric.name.startsWith("carrierd_"))
    .map((metric) => ({ name: metric.name, type: String(metric.type), labels: [...(labels.get(metric.name) ?? [])] }));
}

function documented(): Map<string, Metric> {
  const rows = new Map<string, Metric>();
  for (const cells of tableRows(section(readDoc("docs/events.md"), "`GET /metrics`"))) {
    const name = codeSpans(cells[0] ?? "")[0] ?? "";
    if (!name.startsWith("carrierd_")) continue;
    rows.set(name, { name, type: (cells[1] ?? "").trim(), labels: codeSpans(cells[2] ?? "") });
  }
  return rows;
}

const rowFor = (metric: Metric) => `| \`${metric.name}\` | ${metric.type} | ${metric.labels.map((label) => `\`${label}\``).join(", ")} | meaning |`;

test("every metric the gateway registers has a row with its type and labels", async () => {
  const rows = documented();
  const problems = (await registered()).flatMap((metric) => {
    const row = rows.get(metric.name);
    if (!row) return [`${TABLE} lacks ${metric.name}: add the row ${rowFor(metric)}`];
    if (row.type !== metric.type || row.labels.join(",") !== metric.labels.join(","))
      return [`${TABLE}: the row of ${metric.name} says ${row.type} [${row.labels.join(", ")}]; it is registered as ${rowFor(metric)}`];
    return [];
  });
  expect(problems).toEqual([]);
});

test("every documented carrierd metric is registered, and the process metrics row is there", async () => {
  const names = new Set((await registered()).map((metric) => metric.name));
  const stale = [...documented().keys()].filter((name) => !names.has(name));
  expect(stale.map((name) => `${TABLE} has a row for ${name}, which no code registers: remove it`)).toEqual([]);
  const scrape = await gateway.fetch("/metrics");
  expect(scrape.status).toBe(200);
  const text = await scrape.text();
  expect(text).toMatch(/^# TYPE process_/m);
  expect(section(readDoc("docs/events.md"), "`GET /metrics`")).toContain("| `process_*`, `nodejs_*` |");
});
