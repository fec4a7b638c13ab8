import { expect, test } from "vitest";
import { sameJson } from "../../src/foundation/util/same-json.js";

test("sameJson: equal parsed JSON whatever the key order; any other difference is not", () => {
  const message = { role: "assistant", content: [{ type: "text", text: "a" }], tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] };
  expect(sameJson(message, JSON.parse(JSON.stringify(message)))).toBe(true);
  expect(sameJson({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
  for (const other of [
    { a: 1 },
    { a: 1, b: [1, { c: null }], d: 0 },
    { a: 1, b: [1, { c: 0 }] },
    { a: 1, b: [{ c: null }, 1] },
    { a: "1", b: [1, { c: null }] },
    { a: 1, b: { 0: 1, 1: { c: null } } },
  ]) {
    expect(sameJson({ a: 1, b: [1, { c: null }] }, other)).toBe(false);
    expect(sameJson(other, { a: 1, b: [1, { c: null }] })).toBe(false);
  }
  expect(sameJson([], {})).toBe(false);
  expect(sameJson(null, {})).toBe(false);
  expect(sameJson({ a: undefined }, {})).toBe(false);
});
