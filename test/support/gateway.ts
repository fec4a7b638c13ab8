import "reflect-metadata";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GatewayOptions } from "../../src/foundation/config/options.js";
import { DEFAULT_BODY_LIMIT } from "../../src/foundation/config/options.js";
import { startGateway, type Gateway } from "../../src/gateway/start-gateway.js";
import { silentLogger, type Logger } from "../../src/foundation/logging/logger.js";
import { STORAGE } from "../../src/foundation/container/tokens.js";
import type { Storage } from "../../src/storage/storage.js";
import type { SpecWatch } from "./open-responses.js";

export const TEST_KEY = "test-key-0123456789abcdef";

export interface TestGateway extends Gateway {
  readonly home: string;
  readonly routesPath: string;
  readonly key: string;
  /** Authorised fetch against the gateway. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** POST a JSON body with the key. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Stops the gateway and removes its home. */
  stop(): Promise<void>;
}

export interface TestGatewayOptions {
  /** routes.yaml text. */
  routes: string;
  env?: Record<string, string | undefined>;
  corsOrigins?: string[];
  pluginDirs?: string[];
  /** Reuse a home (restart tests). */
  home?: string;
  log?: Logger;
  /** Gateway options beyond the harness's own (e.g. the WAL checkpoint settings). */
  gatewayOptions?: Partial<GatewayOptions>;
  /** Checks every `/v1/responses` answer that `fetch` and `post` receive against the Open Responses spec. */
  spec?: SpecWatch;
}

/** Starts the real daemon in process on a free loopback port, with its own home and routes.yaml. */
export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "carrierd-test-"));
  const routesPath = join(home, "routes.yaml");
  writeFileSync(routesPath, options.routes);
  const gatewayOptions: GatewayOptions = {
    home,
    routesPath,
    host: "127.0.0.1",
    port: 0,
    apiKey: TEST_KEY,
    corsOrigins: options.corsOrigins ?? [],
    pluginDirs: options.pluginDirs ?? [],
    logLevel: "silent",
    bodyLimit: DEFAULT_BODY_LIMIT,
    keepaliveSeconds: 10,
    env: options.env ?? {},
    ...options.gatewayOptions,
  };
  const gateway = await startGateway(gatewayOptions, options.log ?? silentLogger());
  const authorised = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${gateway.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TEST_KEY}`, ...(init.headers as Record<string, string> | undefined) },
    });
    return options.spec ? options.spec.watch(response, path) : response;
  };
  return {
    ...gateway,
    home,
    routesPath,
    key: TEST_KEY,
    fetch: authorised,
    post: (path, body, headers = {}) =>
      authorised(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } }),
    async stop() {
      await gateway.close();
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A routes.yaml with just the demo model (no pacing). */
export const DEMO_ROUTES = `version: 1
providers:
  demo: { plugin: demo }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
carriers:
  - match: {}
    fields: [reasoning_content]
`;

/** Reads an SSE response into its `data:` payloads (without [DONE]). */
export async function readSse(response: Response): Promise<{ events: unknown[]; done: boolean; raw: string }> {
  const raw = await response.text();
  const events: unknown[] = [];
  let done = false;
  for (const block of raw.split("\n\n")) {
    const data = block
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice(6))
      .join("\n");
    if (!data) continue;
    if (data === "[DONE]") done = true;
    else events.push(JSON.parse(data));
  }
  return { events, done, raw };
}

/**
 * A CLI command reads state.db through a connection of its own: a turn
 * answered a moment ago is there once the gateway has committed it (a lone
 * turn is durable in the journal first, see DurableTurns.save). Resolves on
 * the gateway's own signal that the journal holds no uncommitted turn.
 */
export function afterGatewayCommits(gateway: Gateway): Promise<void> {
  return storageOf(gateway).committed();
}

/** The gateway's Storage port, as its components reach it. */
export function storageOf(gateway: Gateway): Storage {
  return gateway.container.resolve<Storage>(STORAGE);
}
