import { expect, test } from "vitest";
import { GenerationalCache } from "../../src/foundation/util/generational-cache.js";

test("a generational cache holds at most its capacity, drops the generation nobody read, and keeps what is read", () => {
  const cache = new GenerationalCache<string, number>(10);
  for (let i = 0; i < 5; i++) cache.set(`a${i}`, i); // the first generation, now old
  for (let i = 0; i < 4; i++) cache.set(`b${i}`, i);
  expect(cache.get("a0")).toBe(0); // read from the old generation: copied into the young one
  cache.set("b4", 4); // the young generation is full: a1…a4 go with the old one
  expect(cache.get("a1")).toBeUndefined();
  expect(cache.get("a0")).toBe(0);
  expect(cache.get("b3")).toBe(3);
  cache.set("b3", 30); // replacing a value adds no weight
  expect(cache.get("b3")).toBe(30);
  cache.clear();
  expect(cache.get("a0")).toBeUndefined();
});

test("entries can weigh more than one", () => {
  const cache = new GenerationalCache<string, string>(100, (key) => key.length);
  cache.set("x".repeat(60), "long"); // past half the capacity: becomes the old generation at once
  cache.set("y".repeat(60), "longer");
  expect(cache.get("x".repeat(60))).toBeUndefined();
  expect(cache.get("y".repeat(60))).toBe("longer");
});
