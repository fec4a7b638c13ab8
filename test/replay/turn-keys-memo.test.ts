import { expect, test } from "vitest";
import type { ToolCall } from "../../src/providers/contract.js";
import { callKeyOf, fingerprintOf, keysOf } from "../../src/conversation/fingerprint.js";

// The keys of a tool-call turn are looked up by what they are computed from (docs/performance.md#turn-keys-memo):
// every answer must be the one computing them afresh gives, whatever was asked before.
const call = (id: string, name: string, args: string): ToolCall => ({ id, type: "function", function: { name, arguments: args } });
const fresh = (content: string | null, calls: ToolCall[]) => ({ fingerprint: fingerprintOf(content, calls), callKey: callKeyOf(calls) });

test("a tool-call turn asked again, as new objects, gets the keys computed afresh", () => {
  const calls = () => [call("call_8f2kQ1xZ0mB7", "read", '{"path":"a.ts"}'), call("call_Zr83jdQ0pLk2", "grep", '{"q":"x"}')];
  const first = keysOf("", calls());
  const again = keysOf("", calls());
  expect(again).toEqual(first);
  expect(again).toEqual(fresh("", calls()));
});

test("turns that differ in any input the keys read get their own keys", () => {
  const base = keysOf(null, [call("call_8f2kQ1xZ0mB7", "read", '{"path":"a.ts"}')]);
  const variants: [string | null, ToolCall][] = [
    [null, call("call_8f2kQ1xZ0mB7", "read", '{"path":"b.ts"}')],
    [null, call("call_8f2kQ1xZ0mB8", "read", '{"path":"a.ts"}')],
    [null, call("call_8f2kQ1xZ0mB7", "write", '{"path":"a.ts"}')],
    ["Reading it.", call("call_8f2kQ1xZ0mB7", "read", '{"path":"a.ts"}')],
  ];
  for (const [content, one] of variants) {
    const keys = keysOf(content, [one]);
    expect(keys.fingerprint).not.toBe(base.fingerprint);
    expect(keys).toEqual(fresh(content, [one]));
  }
});

test("arguments that are the same JSON written differently share a fingerprint, as without the memo", () => {
  const a = keysOf("", [call("call_8f2kQ1xZ0mB7", "read", '{"path":"a.ts","n":1}')]);
  const b = keysOf("", [call("call_8f2kQ1xZ0mB7", "read", '{ "n": 1, "path": "a.ts" }')]);
  expect(b.fingerprint).toBe(a.fingerprint);
  expect(b.callKey).toBe(a.callKey);
});
