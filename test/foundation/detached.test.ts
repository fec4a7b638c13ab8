import { expect, test } from "vitest";
import { detached } from "../../src/foundation/util/detached.js";

test("detached: the same text, short or long, sliced or not", () => {
  const parent = `${"x".repeat(10_000)}{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[`;
  for (const text of ["", "short", parent.slice(10_000), parent.slice(10_000, 10_020), "é ✓ 🙂 and more than thirteen"]) expect(detached(text)).toBe(text);
});
