import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import { cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { DEMO_ROUTES } from "../support/gateway.js";
import { startOtlpReceiver } from "./otlp-receiver.js";

/**
 * Tracing off is free: a gateway process with no OTLP endpoint in its
 * environment never loads the OpenTelemetry SDK, its exporters or
 * carrierd's spans, even while it answers a chat request. Every module the
 * process resolves is recorded by a preloaded hook (record-loads.mjs); the
 * same gateway with an endpoint loads them, so the recording is known to
 * see them. `@opentelemetry/api` alone is loaded either way: prom-client
 * (the Prometheus metrics) requires it when it loads; with no provider
 * registered it is a no-op and nothing calls it per request.
 */
const KEY = "k-tracing-off-0123456789abcdef";
const HOOK = fileURLToPath(new URL("./record-loads.mjs", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "carrierd-tracing-off-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The modules a gateway process resolved while it started and answered one chat request. */
async function modulesLoaded(name: string, extra: Record<string, string>): Promise<string[]> {
  const home = join(work, name);
  const routes = join(work, `${name}-routes.yaml`);
  const loads = join(work, `${name}-modules.txt`);
  writeFileSync(routes, DEMO_ROUTES);
  writeFileSync(loads, "");
  const env = cleanEnv({ CARRIERD_HOME: home, CARRIERD_API_KEY: KEY, LOADED_MODULES_FILE: loads, ...extra });
  for (const variable of Object.keys(env)) if (variable.startsWith("OTEL_") && !(variable in extra)) delete env[variable];
  const gateway = await startGatewayProcess(["--port", "0", "--routes", routes], env, { nodeFlags: ["--import", HOOK] });
  try {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(response.status).toBe(200);
  } finally {
    await gateway.stop();
  }
  return readFileSync(loads, "utf8").split("\n").filter(Boolean);
}

/** Modules of OpenTelemetry beyond prom-client's @opentelemetry/api, and carrierd's own that only tracing loads. */
function tracingModules(paths: string[]): string[] {
  return paths.filter(
    (path) =>
      (path.includes("@opentelemetry/") && !path.includes("@opentelemetry/api/")) ||
      /dist\/src\/foundation\/tracing\/(open-telemetry|request-spans|genai-metrics)\.js/.test(path),
  );
}

test("with no OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry SDK module is loaded; with one they are", async () => {
  const off = await modulesLoaded("off", {});
  expect(off.some((path) => path.includes("/dist/src/gateway/start-gateway.js"))).toBe(true);
  expect(tracingModules(off)).toEqual([]);
  // what prom-client loads of it: the API alone
  expect(new Set(off.filter((path) => path.includes("@opentelemetry/")).map((path) => /@opentelemetry\/[^/]+/.exec(path)![0]))).toEqual(
    new Set(["@opentelemetry/api"]),
  );

  const receiver = await startOtlpReceiver();
  try {
    const on = await modulesLoaded("on", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    expect(tracingModules(on).some((path) => path.includes("@opentelemetry/sdk-trace-base/"))).toBe(true);
    expect(tracingModules(on).some((path) => path.includes("foundation/tracing/open-telemetry.js"))).toBe(true);
  } finally {
    await receiver.close();
  }
  expect(receiver.received.some((item) => item.path === "/v1/traces")).toBe(true);
}, 90_000); // two gateway processes start, each resolving every module through the recording hook
