import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { expect, test } from "vitest";
import { createLogger } from "../../src/foundation/logging/logger.js";
import { CENSOR, redact } from "../../src/foundation/logging/redact.js";

test("secret keys are censored at any depth, and bearer tokens inside strings", () => {
  const scrubbed = redact({
    headers: { Authorization: "Bearer sk-1", "x-api-key": "sk-2", accept: "text/event-stream" },
    upstream: { request: { options: { headers: { "x-goog-api-key": "g-3" } } } },
    apiKey: "sk-4",
    note: "retrying with Bearer sk-5 after 401",
    usage: { prompt_tokens: 3, completion_tokens: 4, completion_tokens_details: { reasoning_tokens: 2 } },
    env: { DEEPSEEK_API_KEY: "sk-11", AWS_SECRET_ACCESS_KEY: "aws-12", AWS_SESSION_TOKEN: "aws-13", HOME: "/root" },
    provider: { apiKeyEnv: "DEEPSEEK_API_KEY", max_tokens: 100 },
  });
  expect(scrubbed).toEqual({
    headers: { Authorization: CENSOR, "x-api-key": CENSOR, accept: "text/event-stream" },
    upstream: { request: { options: { headers: { "x-goog-api-key": CENSOR } } } },
    apiKey: CENSOR,
    note: `retrying with Bearer ${CENSOR} after 401`,
    usage: { prompt_tokens: 3, completion_tokens: 4, completion_tokens_details: { reasoning_tokens: 2 } },
    env: { DEEPSEEK_API_KEY: CENSOR, AWS_SECRET_ACCESS_KEY: CENSOR, AWS_SESSION_TOKEN: CENSOR, HOME: "/root" },
    provider: { apiKeyEnv: "DEEPSEEK_API_KEY", max_tokens: 100 },
  });
});

test("texts are masked whatever the case of what gives them away, and a key name judged once is judged the same again", () => {
  const texts = [
    "BEARER abcdefgh1234 and basic dXNlcjpwYXNz",
    "GET /v1/models?API_KEY=abc123&x=1",
    "upstream said: Incorrect API key provided: sk-ABCDEFGHIJKLMNOPQRSTUV",
    "AIzaSyA0123456789abcdefghijklmnopqrstu ghp_0123456789abcdefghijklmnopqrstuvwxyz",
  ];
  for (const text of texts) expect(redact(text)).not.toMatch(/abcdefgh1234|dXNlcjpwYXNz|abc123|sk-ABC|AIzaSy|ghp_0/);
  for (let i = 0; i < 3; i++)
    expect(redact({ Authorization: "x", path: "/v1/chat/completions" })).toEqual({ Authorization: CENSOR, path: "/v1/chat/completions" });
});

test("errors keep their message and stack, scrubbed, with their cause", () => {
  const cause = Object.assign(new Error("socket hang up"), { headers: { authorization: "Bearer sk-6" } });
  const scrubbed = redact({ err: new Error("upstream said: invalid Bearer sk-7", { cause }) }) as { err: Record<string, unknown> };
  expect(scrubbed.err.message).toBe(`upstream said: invalid Bearer ${CENSOR}`);
  expect(String(scrubbed.err.stack)).toContain("upstream said");
  expect(scrubbed.err.cause).toMatchObject({ message: "socket hang up", headers: { authorization: CENSOR } });
  expect(JSON.stringify(scrubbed)).not.toMatch(/sk-\d/);
});

test("the gateway's file logger writes nothing secret", async () => {
  const home = mkdtempSync(join(tmpdir(), "carrierd-redact-"));
  try {
    const log = createLogger({ level: "debug", logDir: join(home, "logs"), stdout: false });
    log.info(
      { provider: { id: "x", api_key: "sk-8" }, err: Object.assign(new Error("boom"), { config: { headers: { Authorization: "Bearer sk-9" } } }) },
      "calling with Bearer sk-10",
    );
    // ending the transport waits for its worker to write everything and exit
    const stream = (log as unknown as Record<symbol, NodeJS.WritableStream & { once(event: "close", listener: () => void): void }>)[pino.symbols.streamSym]!;
    await new Promise<void>((resolve) => {
      stream.once("close", resolve);
      stream.end();
    });
    const text = readFileSync(join(home, "logs", "carrierd.log"), "utf8");
    expect(text).toContain("boom");
    expect(text).toContain(`calling with Bearer ${CENSOR}`);
    expect(text).not.toMatch(/sk-\d/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
