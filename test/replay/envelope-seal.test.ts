import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { EnvelopeKeyRing } from "../../src/routing/carriers/envelope-keys.js";
import { deflateRawSync } from "node:zlib";
import { deflated, ENVELOPE_PREFIX, Envelopes, type SealedCarriers } from "../../src/routing/carriers/envelope.js";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";

/** seal and open on their own: what goes in comes out, string for string; what was not sealed here never opens and never throws. */

const home = mkdtempSync(join(tmpdir(), "carrierd-envelope-seal-"));
const store = openSqliteStorage({ home });
const envelopes = new Envelopes(new EnvelopeKeyRing(store.envelopeKeys));
afterAll(async () => {
  await store.close();
  rmSync(home, { recursive: true, force: true });
});

/** Carriers of every kind, with strings JSON tools like to rewrite: escapes, lone surrogates, NUL, U+2028, big and odd numbers as text. */
function carriers(reasoning: string): SealedCarriers {
  return {
    id: "turn_abc",
    sessionId: "sess_abc",
    plugin: "anthropic",
    provider: "anthropic",
    upstreamModel: "claude-sonnet-4-20250514",
    reasoningText: reasoning,
    reasoningDetails: [
      { type: "reasoning.text", text: "a\u0000b\u2028c \ud83e\udde0 \\u00e9", signature: "EqQBCkgIARABGAIiQH/+==", index: 0 },
      { type: "reasoning.encrypted", data: "gAAAAABpM0Yj-x_y/z+=", format: "openai-responses-v1", index: 1 },
    ],
    // an OpenAI Responses upstream's own encrypted reasoning, as a plugin's native record would hold it
    nativeRecord: {
      content: [{ type: "thinking", thinking: reasoning, signature: "sig/+==" }],
      reasoning_item: { type: "reasoning", id: "rs_68af", encrypted_content: "gAAAAABo-enc_" + "Zm9v".repeat(200) + "==", summary: [] },
      numbers: [1e21, -0.5, 12345678901234],
    },
  };
}

test.each([
  ["short (500 characters)", 500],
  ["long (8,000 characters, deflated)", 8000],
])("%s: opens to exactly the carriers sealed", async (_name, size) => {
  const sealed = carriers("Thinking… ".repeat(size / 10));
  const envelope = await envelopes.seal(sealed, "scope-a");
  expect(envelope.startsWith(ENVELOPE_PREFIX)).toBe(true);
  expect(envelope).toMatch(/^cd1\.[A-Za-z0-9_-]+$/);
  const opened = await envelopes.open(envelope, "scope-a");
  expect(opened).toEqual(sealed);
  expect(JSON.stringify(opened)).toBe(JSON.stringify(sealed));
});

/** Text with matches near and far (words repeat, some with a counter): `length` characters, the same every run. */
function wordy(length: number): string {
  const words = ["think", "the", "signature", '"quoted"', "é", "🧠", "\\n"];
  let text = "";
  for (let i = 0; text.length < length; i++) text += `${words[(i * 7919) % words.length]}${i % 3 === 0 ? i.toString(36) : ""} `;
  return text.slice(0, length);
}

test.each([512, 700, 1_000, 1_800, 4_000, 9_000, 20_000, 33_000, 70_000])(
  "a payload of %i bytes deflates in its fitted window to the bytes the default window writes, and seals and opens",
  async (size) => {
    const payload = Buffer.from(wordy(size));
    expect(deflated(payload).equals(deflateRawSync(payload, { level: 1 }))).toBe(true);
    const sealed = carriers(wordy(size));
    expect(await envelopes.open(await envelopes.seal(sealed, "scope-a"), "scope-a")).toEqual(sealed);
  },
);

test("two seals of the same carriers differ (a fresh nonce each), both open", async () => {
  const sealed = carriers("same");
  const [one, two] = [await envelopes.seal(sealed, "s"), await envelopes.seal(sealed, "s")];
  expect(one).not.toBe(two);
  expect(await envelopes.open(one, "s")).toEqual(sealed);
  expect(await envelopes.open(two, "s")).toEqual(sealed);
});

test("nonces are read for many seals at once and never repeat: a thousand seals, past several reads, each its own nonce", async () => {
  const sealed = carriers("same");
  const nonces = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const bytes = Buffer.from((await envelopes.seal(sealed, "s")).slice(ENVELOPE_PREFIX.length), "base64url");
    nonces.add(bytes.subarray(8, 20).toString("hex")); // after the 8-byte key id
  }
  expect(nonces.size).toBe(1000);
});

test("envelopes sealed by an earlier build (the flag byte and the body through the cipher apart) open unchanged, plain and deflated", async () => {
  // sealed before the seal was reworked for speed, with this key, at this time: the format is the same, so they must open as they are
  const key = { generation: 1, id: "0123456789abcdef", secret: Buffer.alloc(32, 7), createdAt: 1_800_000_000_000 };
  const store = { ensure: async () => [key] };
  const now = () => 1_800_000_000_000;
  const earlier = new Envelopes(new EnvelopeKeyRing(store, { now }), { now });
  const base = { id: "turn_golden", sessionId: "sess_golden", plugin: "openai-compatible", provider: "deepseek", upstreamModel: "deepseek-reasoner" };
  const plain =
    "cd1.ASNFZ4mrze8eZabNPL6QzRxiYEy6pHntbNaeCyedpDofJnZYQyoDg7LVZj8JIaRXOc69vLutGfYwwmsd52SHlOscTZZ7rrJOAX40CW_lMRFnWW6dxkuHXw9seuEbuybUQssFqelg0FaNDqaRl12Atlg2lpWj_75nC3P4oMaJmHbpsh1B8AhNyXKGvBT0lnGyFVvRKD6q4YdHCB2ZBCqOVeMSc65pOJ5sWP3PZVsBpuc_ZIqFft0YoEh1jy0tJSS4rTeq8m8M8KJRH7y0Y4f0-6YXPrffswXTOw";
  const deflated =
    "cd1.ASNFZ4mrze99xA1nTmB2RsUXCQ0fCYlWUXBCScG_ZZAC4ieqKM4qTL-czoZi6c_-EtUWvaZvIKJVYe1O4BtZbiYx2wJHgSxCMc0HLELo7kb7IHNn-PZpXQjr1t-eeDzBSn5oqUJ48ATBbEumGco2WN4Z3LqBMBAhNfUsqlYaJkjVMBOMCRkGljqE_0J147Utbf1zY2CenucRDQ2anZa73VOcCf5Czw9CdcjTXR9HnsR4_Q";
  expect(await earlier.open(plain, "scope-golden")).toEqual({ ...base, reasoningText: "short", reasoningDetails: undefined, nativeRecord: undefined });
  expect(await earlier.open(deflated, "scope-golden")).toEqual({
    ...base,
    reasoningText: "Thinking it over. ".repeat(40),
    reasoningDetails: undefined,
    nativeRecord: undefined,
  });
  // and what this build seals with that key reads back the same way
  const again = await earlier.seal({ ...base, reasoningText: "short" }, "scope-golden");
  expect(await new Envelopes(new EnvelopeKeyRing(store, { now }), { now }).open(again, "scope-golden")).toMatchObject({ reasoningText: "short" });
});

test("bound to the access key: another data scope does not open it", async () => {
  const envelope = await envelopes.seal(carriers("mine"), "scope-a");
  expect(await envelopes.openWithReason(envelope, "scope-b")).toEqual({ refused: "forged or not this key's" });
});

test.each([undefined, null, 42, {}, [], "", "gAAAAABpM0Yj", "cd1.", "cd1.%%%", `cd1.${"A".repeat(200)}`, `cd1.${Buffer.alloc(64, 255).toString("base64url")}`])(
  "never throws on %j",
  async (value) => {
    await expect(envelopes.open(value, "scope-a")).resolves.toBeUndefined();
  },
);

test("an envelope opened before answers from memory: the same carriers object, for its own key only, and not past its expiry", async () => {
  let now = Date.now();
  const clocked = new Envelopes(new EnvelopeKeyRing(store.envelopeKeys), { now: () => now, lifetimeMs: 60_000 });
  const envelope = await clocked.seal(carriers("remembered"), "scope-a");
  const first = await clocked.open(envelope, "scope-a");
  expect(await clocked.open(envelope, "scope-a")).toBe(first);
  expect(await clocked.openWithReason(envelope, "scope-b")).toEqual({ refused: "forged or not this key's" });
  now += 60_000;
  expect(await clocked.openWithReason(envelope, "scope-a")).toEqual({ refused: "expired" });
});
