import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { carrierd, cleanEnv } from "../foundation/cli-process.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startBedrockEmulator } from "./emulators/bedrock-emulator.js";
import type { Emulator } from "./emulators/http-emulator.js";
import { saveEnv } from "../support/saved-env.js";

/**
 * Bedrock needs AWS credentials (or a Bedrock API key) as every other
 * provider needs its key: without them its models are not listed, a request
 * for one is a 503 naming what to set, and `routes check` says so. And its
 * own transport keeps the provider's routes.yaml deadlines.
 */
const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const AWS = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION"];
const restoreEnv = saveEnv();
const withoutAws = () => {
  for (const name of AWS) delete process.env[name];
};
afterAll(restoreEnv);

const routes = (baseUrl: string, extra = "") => `version: 1
providers:
  demo: { plugin: demo }
  bedrock: { plugin: bedrock, base_url: ${baseUrl}${extra} }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: bedrock-oss, provider: bedrock, model: "openai.gpt-oss-120b-1:0" }
carriers:
  - match: {}
    fields: [reasoning_content]
`;

const hi = { model: "bedrock-oss", messages: [{ role: "user", content: "hi" }] };

describe("Bedrock without AWS credentials", () => {
  let bedrock: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    withoutAws();
    bedrock = await startBedrockEmulator({ credentials: CREDENTIALS });
    gateway = await startTestGateway({ routes: routes(bedrock.url) });
  });
  afterAll(async () => {
    await gateway?.stop();
    await bedrock?.close();
  });

  test("its models are not listed in /v1/models", async () => {
    const body = (await (await gateway.fetch("/v1/models")).json()) as { data: { id: string }[] };
    expect(body.data.map((model) => model.id)).toEqual(["demo"]);
  });

  test.each([
    ["/v1/chat/completions", hi],
    ["/v1/chat/completions", { ...hi, stream: true }],
    ["/v1/responses", { model: "bedrock-oss", input: "hi" }],
  ])("%s is a 503 provider_not_configured naming the variables, and Bedrock is never called", async (path, body) => {
    const response = await gateway.post(path, body);
    expect(response.status).toBe(503);
    const { error } = (await response.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({ code: "provider_not_configured", param: "model" });
    expect(error.message).toContain("provider 'bedrock', whose credentials are not set: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
    expect(error.message).toContain("api_key_env");
    expect(error.message).not.toMatch(/stack|at .*\.js/);
    expect(bedrock.received).toEqual([]);
  });

  test("routes check warns that Bedrock's credentials are not set, and still passes", async () => {
    const home = mkdtempSync(join(tmpdir(), "carrierd-bedrock-"));
    try {
      const file = join(home, "routes.yaml");
      writeFileSync(file, routes(bedrock.url));
      const env = cleanEnv();
      for (const name of AWS) delete env[name];
      const result = await carrierd(["routes", "check", file, "--home", home], { env });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        "warning: provider bedrock: credentials not set (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary credentials), or name a Bedrock API key in api_key_env); its models (bedrock-oss) are not listed and answer 503 until they are",
      );
      const keyed = await carrierd(["routes", "check", file, "--home", home], {
        env: { ...env, AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey },
      });
      expect(keyed.stdout).not.toContain("provider bedrock");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("Bedrock with an API key named by api_key_env", () => {
  let bedrock: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    withoutAws();
    bedrock = await startBedrockEmulator({ credentials: CREDENTIALS });
    gateway = await startTestGateway({
      routes: routes(bedrock.url, ", api_key_env: CARRIERD_TEST_BEDROCK_KEY"),
      env: { CARRIERD_TEST_BEDROCK_KEY: "bedrock-api-key-1" },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await bedrock?.close();
  });

  test("is configured: listed, and called with the key as a bearer token", async () => {
    const body = (await (await gateway.fetch("/v1/models")).json()) as { data: { id: string }[] };
    expect(body.data.map((model) => model.id)).toEqual(["demo", "bedrock-oss"]);
    await gateway.post("/v1/chat/completions", hi);
    expect(bedrock.received[0]!.headers.authorization).toBe("Bearer bedrock-api-key-1");
  });
});

describe("Bedrock keeps the provider's routes.yaml deadlines", () => {
  let server: Server;
  let url: string;
  let gateway: TestGateway;
  let behaviour: "silent" | "head-only" = "silent";
  const open = new Set<ServerResponse>();
  beforeAll(async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey });
    // an upstream that takes the request and then says nothing (or only its head): undici alone would wait 300 s
    server = createServer((request, response) => {
      request.resume();
      open.add(response);
      response.on("close", () => open.delete(response));
      if (behaviour === "head-only") response.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" }).flushHeaders();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gateway = await startTestGateway({ routes: routes(url, ", deadlines: { first_byte: 0.5, idle: 0.4, total: 5 }") });
  });
  afterEach(() => {
    for (const response of open) response.destroy();
  });
  afterAll(async () => {
    await gateway?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test("first_byte: a silent Bedrock is a 504 upstream_timeout naming the key, in about the deadline", async () => {
    behaviour = "silent";
    const started = performance.now();
    const response = await gateway.post("/v1/chat/completions", hi);
    const elapsed = performance.now() - started;
    expect(response.status).toBe(504);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("upstream_timeout");
    expect(error.message).toContain("providers.bedrock.deadlines.first_byte");
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(4_000);
  });

  test("idle: a ConverseStream that goes silent after its head ends the stream with an upstream_timeout event", async () => {
    behaviour = "head-only";
    const started = performance.now();
    const response = await gateway.post("/v1/chat/completions", { ...hi, stream: true });
    const { events, done } = await readSse(response);
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(done).toBe(true);
    const last = events.at(-1) as { error?: { code: string; message: string } };
    expect(last.error?.code).toBe("upstream_timeout");
    expect(last.error?.message).toContain("providers.bedrock.deadlines.idle");
  });
});
