import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { carrierd, cleanEnv } from "./cli-process.js";

/**
 * A provider whose key variable is named but unset: its models are not
 * listed, and calling one answers at once naming the variable. Its host is
 * one no resolver knows (.invalid): had carrierd tried it, the answer would
 * be an "unreachable" 502, not this.
 */
const ROUTES = `version: 1
providers:
  demo: { plugin: demo }
  keyless: { plugin: openai-compatible, base_url: https://api.keyless.invalid/v1, api_key_env: CARRIERD_TEST_UNSET_KEY }
  keyed: { plugin: openai-compatible, base_url: https://api.keyed.invalid/v1, api_key_env: CARRIERD_TEST_SET_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: keyless-reasoner, provider: keyless, model: r1 }
  - { name: keyed-reasoner, provider: keyed, model: r1 }
  - { name: "keyed/*", provider: keyed }
  - { name: demo, provider: keyed, model: shadowed }
carriers:
  - match: {}
    fields: [reasoning_content]
`;

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: ROUTES, env: { CARRIERD_TEST_SET_KEY: "sk-set" } });
});
afterAll(() => gateway?.stop());

test("/v1/models lists concrete, callable ids only: no globs, no model without its key, each id once", async () => {
  const body = (await (await gateway.fetch("/v1/models")).json()) as { data: { id: string; owned_by: string }[] };
  expect(body.data.map((model) => [model.id, model.owned_by])).toEqual([
    ["demo", "demo"],
    ["keyed-reasoner", "keyed"],
  ]);
});

test.each([
  ["/v1/chat/completions", { model: "keyless-reasoner", messages: [{ role: "user", content: "hi" }] }],
  ["/v1/chat/completions", { model: "keyless-reasoner", stream: true, messages: [{ role: "user", content: "hi" }] }],
  ["/v1/responses", { model: "keyless-reasoner", input: "hi" }],
  ["/v1/responses", { model: "keyless-reasoner", input: "hi", stream: true }],
])("%s for a model without its key is a 503 naming the variable, before any upstream call", async (path, body) => {
  const response = await gateway.post(path, body);
  expect(response.status).toBe(503);
  const { error } = (await response.json()) as { error: { message: string; param: string; code: string } };
  expect(error).toMatchObject({ code: "provider_not_configured", param: "model" });
  expect(error.message).toContain("set CARRIERD_TEST_UNSET_KEY");
  expect(error.message).not.toMatch(/ENOTFOUND|unreachable/);
});

test("routes check warns about each provider whose key is unset, and still passes", async () => {
  const home = mkdtempSync(join(tmpdir(), "carrierd-keys-"));
  try {
    const file = join(home, "routes.yaml");
    writeFileSync(file, ROUTES);
    const result = await carrierd(["routes", "check", file, "--home", home], { env: cleanEnv({ CARRIERD_TEST_SET_KEY: "sk-set" }) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "warning: provider keyless: CARRIERD_TEST_UNSET_KEY is not set; its models (keyless-reasoner) are not listed and answer 503 until it is",
    );
    expect(result.stdout).not.toContain("provider keyed:");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
