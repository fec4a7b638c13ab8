import { expect, test } from "vitest";
import {
  isJsonObject,
  parseObject,
  readArray,
  readNumber,
  readObject,
  readString,
  requireObject,
  requireObjects,
  UpstreamShapeError,
} from "../../src/providers/plugin-api.js";

test("the readers give the value when it has their type, and undefined for anything else (absent and null included)", () => {
  const object = { o: { a: 1 }, list: [1] };
  expect([readString("x"), readString(2), readString(null), readString(undefined)]).toEqual(["x", undefined, undefined, undefined]);
  expect([readNumber(2), readNumber(1e400), readNumber(Number.NaN), readNumber("2")]).toEqual([2, undefined, undefined, undefined]);
  expect(readObject(object.o)).toBe(object.o); // the value itself, no copy
  expect([readObject(object.list), readObject(null), readObject("{}"), readObject(undefined)]).toEqual([undefined, undefined, undefined, undefined]);
  expect(readArray(object.list)).toBe(object.list);
  expect([readArray(object.o), readArray(null)]).toEqual([undefined, undefined]);
  expect([isJsonObject({}), isJsonObject([]), isJsonObject(null), isJsonObject("{}")]).toEqual([true, false, false, false]);
});

test("parseObject parses an object and nothing else", () => {
  expect(parseObject('{"a":[1]}')).toEqual({ a: [1] });
  expect([parseObject("null"), parseObject("[1]"), parseObject('"s"'), parseObject("not json"), parseObject("")]).toEqual([
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

test("requireObject and requireObjects name what was expected and what came instead", () => {
  const calls = [{ id: "a" }];
  expect(requireObjects(calls, "a tool_calls entry")).toBe(calls);
  expect(requireObject(calls[0], "a tool_calls entry")).toBe(calls[0]);
  expect(() => requireObject(null, "a tool_calls entry")).toThrow(new UpstreamShapeError("a tool_calls entry", "null"));
  expect(() => requireObject("x", "a content part")).toThrow("the upstream sent a string where it should send a content part (an object)");
  expect(() => requireObjects([{}, [1]], "a reasoning_details entry")).toThrow(
    "the upstream sent an array where it should send a reasoning_details entry (an object)",
  );
});
