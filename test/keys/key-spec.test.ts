import { expect, test } from "vitest";
import { checkKeySpec } from "../../src/http/keys/key-spec.js";
import { newSecret, secretHash } from "../../src/http/keys/secret.js";
import { redactText } from "../../src/foundation/logging/redact.js";

const spec = (extra: Partial<Parameters<typeof checkKeySpec>[0]> = {}) =>
  checkKeySpec({ name: "web", scopes: [], models: [], eventsOf: [], expires: undefined, ...extra }, Date.parse("2026-06-01T00:00:00Z"));

test("a key is chat-only by default; scopes, models and events-of are deduplicated", () => {
  expect(spec()).toEqual({ name: "web", scopes: ["chat"], models: [], eventsOf: [], expiresAt: null });
  expect(spec({ scopes: ["events", "events", "admin"], models: ["gpt-*", "gpt-*"], eventsOf: ["a", "a"] })).toEqual({
    name: "web",
    scopes: ["events", "admin"],
    models: ["gpt-*"],
    eventsOf: ["a"],
    expiresAt: null,
  });
  expect(spec({ expires: "2027-01-31" })).toMatchObject({ expiresAt: Date.parse("2027-01-31") });
});

test("what keys create refuses, each with a sentence", () => {
  for (const refused of [
    spec({ name: "" }),
    spec({ name: "has space" }),
    spec({ name: "owner" }),
    spec({ name: "x".repeat(65) }),
    spec({ scopes: ["root"] }),
    spec({ models: [""] }),
    spec({ eventsOf: ["no/slash"] }),
    spec({ expires: "soon" }),
    spec({ expires: "2020-01-01" }),
  ]) {
    expect(refused).toEqual({ problem: expect.stringMatching(/\w+ \w+/) });
  }
});

test("secrets are 256 random bits behind a recognisable prefix; only their hash is kept, and logs mask them", () => {
  const secret = newSecret();
  expect(secret).toMatch(/^ck_[A-Za-z0-9_-]{43}$/);
  expect(newSecret()).not.toBe(secret);
  expect(secretHash(secret)).toMatch(/^[0-9a-f]{64}$/);
  expect(redactText(`a client sent ${secret} by mistake`)).not.toContain(secret);
});
