import "reflect-metadata";
import { expect, test } from "vitest";
import { openThinkingSignatures } from "../../src/ingress/messages/thinking-signature.js";
import type { AnthropicMessage, ContentBlock } from "../../src/ingress/messages/request.js";
import type { ChatMessage } from "../../src/providers/contract.js";
import { EnvelopeKeyRing } from "../../src/routing/carriers/envelope-keys.js";
import { Envelopes, type SealedCarriers } from "../../src/routing/carriers/envelope.js";
import type { ResolvedModel } from "../../src/routing/routes/route-table.js";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import { silentLogger } from "../../src/foundation/logging/logger.js";

/**
 * Thinking signatures a client forged from one of carrierd's (its key id
 * kept, its bytes altered, so each reaches the cipher): however many blocks
 * of them an assistant message holds, one is opened, the message's last
 * envelope, as for a client's own history, so a forged block costs no more
 * than any other block of its size.
 */
const CARRIERS: SealedCarriers = {
  id: "turn_1",
  sessionId: "sess_1",
  plugin: "openai-compatible",
  provider: "deepseek",
  upstreamModel: "deepseek-reasoner",
  reasoningText: "Let me think.",
  reasoningDetails: undefined,
  nativeRecord: undefined,
};

test("a message of 60,000 forged signatures opens one envelope, and nothing opens; a message whose last envelope is real opens it", async () => {
  const storage = openSqliteStorage({ home: "", file: ":memory:" });
  const envelopes = new Envelopes(new EnvelopeKeyRing(storage.envelopeKeys));
  const real = await envelopes.seal(CARRIERS, "scope");
  let opens = 0;
  const counting = Object.assign(Object.create(envelopes) as Envelopes, {
    openWithReason: (envelope: unknown, keyHash: string) => {
      opens++;
      return envelopes.openWithReason(envelope, keyHash);
    },
  });
  // each forgery differs from the real envelope in one character of its ciphertext, so none is a memo hit
  const forged = (i: number) => {
    const at = real.length - 30 + (i % 20);
    const swapped = real[at] === "A" ? "B" : "A";
    return `${real.slice(0, at)}${swapped}${real.slice(at + 1)}`.slice(0, real.length - 5) + String(i).padStart(5, "0").slice(-5);
  };
  const blocks: ContentBlock[] = Array.from({ length: 60_000 }, (_, i) => ({ type: "thinking", thinking: "", signature: forged(i) }));
  const messages: AnthropicMessage[] = [
    { role: "user", content: "hi" },
    { role: "assistant", content: blocks },
    { role: "user", content: "again" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Let me think.", signature: real },
        { type: "text", text: "ok" },
      ],
    },
    { role: "user", content: "and?" },
  ];
  const canonical: ChatMessage[] = messages.map((message) => ({ role: message.role, content: "" }));
  const resolved = {
    provider: { plugin: "openai-compatible" },
    upstreamModel: "deepseek-reasoner",
    family: { sameProducer: (a: { model: string }, b: { model: string }) => a.model === b.model },
  } as unknown as ResolvedModel;
  const started = performance.now();
  const opened = await openThinkingSignatures(counting, messages, canonical, resolved, "scope", silentLogger());
  console.log(`60,000 forged signatures and one real: ${opens} opens, ${(performance.now() - started).toFixed(0)} ms`);
  expect(opens).toBe(2);
  expect([...(opened?.keys() ?? [])]).toEqual([3]);
  expect(opened?.get(3)).toMatchObject({ reasoningText: "Let me think." });
  await storage.close();
});
