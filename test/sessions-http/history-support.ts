import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import type { OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster } from "../support/pg-cluster.js";
import { pgSkipReason } from "../support/postgres.js";

/** A gateway on one backend; history reads differ per backend, so every test runs on both. */
export interface Backend {
  readonly gateway: TestGateway;
  stop(): Promise<void>;
}

export const BACKENDS: Record<string, (routes: string) => Promise<Backend>> = {
  sqlite: async (routes) => {
    const gateway = await startTestGateway({ routes });
    return { gateway, stop: () => gateway.stop() };
  },
  postgres: async (routes) => {
    const cluster = await startPgCluster(1, { routes });
    return { gateway: cluster.gateways[0]!, stop: () => cluster.stop() };
  },
};

export const skipBackend = (name: string): boolean => name === "postgres" && pgSkipReason() !== undefined;

/**
 * DeepSeek-like (must_echo), OpenRouter-like (signed and encrypted
 * reasoning_details) and a strict provider that refuses `reasoning` in a
 * real provider's phrasing, all on the loopback emulator.
 */
export function historyRoutes(upstream: OpenAIUpstream): string {
  return `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${upstream.baseUrl("deepseek")}" }
  openrouter: { plugin: openai-compatible, base_url: "${upstream.baseUrl("openrouter")}" }
  strictp: { plugin: openai-compatible, base_url: "${upstream.baseUrl("strictp")}" }
models:
  - { name: "deepseek/*", provider: deepseek }
  - { name: "openrouter/*", provider: openrouter }
  - { name: "strictp/*", provider: strictp }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: { provider: openrouter }
    fields: [reasoning_content, reasoning, reasoning_details]
  - match: { provider: strictp }
    fields: [reasoning_content, reasoning]
`;
}

/** pydantic's refusal of an extra field, as an OpenAI-compatible server behind it words it. */
export const STRICT_REASONING = {
  strictp: {
    fields: ["reasoning"],
    status: 400,
    body: (index: number, field: string) =>
      JSON.stringify({
        error: { message: `400 Error from provider: Extra inputs are not permitted, field: 'messages[${index}].${field}'`, type: "invalid_request_error" },
      }),
  },
};

const SCHEMA_DIR = join(import.meta.dirname, "..", "..", "schemas", "sessions");

/** Validators of schemas/sessions: the list page and one session. */
export function sessionValidators(): { list: ValidateFunction; session: ValidateFunction } {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const load = (file: string) => JSON.parse(readFileSync(join(SCHEMA_DIR, file), "utf8")) as object;
  ajv.addSchema(load("session.schema.json"));
  ajv.addSchema(load("session-list.schema.json"));
  return {
    list: ajv.getSchema("https://carrierd.dev/schemas/sessions/session-list.schema.json")!,
    session: ajv.getSchema("https://carrierd.dev/schemas/sessions/session.schema.json")!,
  };
}

/** Asserts a body against its schema, naming every problem. */
export function expectValid(validate: ValidateFunction, body: unknown): void {
  const ok = validate(body);
  expect(ok ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ""}`)).toEqual([]);
}

/** A chat request with a bearer key (the owner's, or an access key's). */
export async function chat(
  gateway: TestGateway,
  secret: string,
  body: Record<string, unknown>,
  session?: string,
): Promise<{ status: number; session: string | null; message: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...(session ? { "x-session-id": session } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { choices?: { message: Record<string, unknown> }[] };
  return { status: response.status, session: response.headers.get("x-session-id"), message: json.choices?.[0]?.message ?? {} };
}

/** What a stateless frontend keeps of an answer: text and tool calls, no reasoning. */
export function kept(message: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { role: "assistant", content: message.content ?? null };
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) out.tool_calls = message.tool_calls;
  return out;
}

/** GET with a key; the body parsed. */
export async function getJson(gateway: TestGateway, secret: string, path: string, method = "GET"): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${secret}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
