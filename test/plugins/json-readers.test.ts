import { expect, test } from "vitest";
import { arrayField, isJsonObject, numberField, objectField, parseObject, readObject, requireObject, requireObjects, stringField, UpstreamShapeError } from "../../src/plugins/plugin-api.js";

test("the field readers give a value of their type, and nothing for absent, null or another type", () => {
  const object = { s: "x", n: 2, inf: 1e400, o: { a: 1 }, list: [1], nil: null };
  expect([stringField(object, "s"), stringField(object, "n"), stringField(object, "nil"), stringField(object, "missing"), stringField(undefined, "s")]).toEqual(["x", undefined, undefined, undefined, undefined]);
  expect([numberField(object, "n"), numberField(object, "inf"), numberField(object, "s")]).toEqual([2, undefined, undefined]);
  expect(objectField(object, "o")).toBe(object.o); // the value itself, no copy
  expect([objectField(object, "list"), objectField(object, "nil"), objectField(undefined, "o")]).toEqual([undefined, undefined, undefined]);
  expect(arrayField(object, "list")).toBe(object.list);
  expect(arrayField(object, "o")).toBeUndefined();
  expect([isJsonObject({}), isJsonObject([]), isJsonObject(null), isJsonObject("{}")]).toEqual([true, false, false, false]);
  expect(readObject([])).toBeUndefined();
});

test("parseObject parses an object and nothing else", () => {
  expect(parseObject('{"a":[1]}')).toEqual({ a: [1] });
  expect([parseObject("null"), parseObject("[1]"), parseObject('"s"'), parseObject("not json"), parseObject("")]).toEqual([undefined, undefined, undefined, undefined, undefined]);
});

test("requireObject and requireObjects name what was expected and what came instead", () => {
  const calls = [{ id: "a" }];
  expect(requireObjects(calls, "a tool_calls entry")).toBe(calls);
  expect(requireObject(calls[0], "a tool_calls entry")).toBe(calls[0]);
  expect(() => requireObject(null, "a tool_calls entry")).toThrow(new UpstreamShapeError("a tool_calls entry", "null"));
  expect(() => requireObject("x", "a content part")).toThrow("the upstream sent a string where it should send a content part (an object)");
  expect(() => requireObjects([{}, [1]], "a reasoning_details entry")).toThrow("the upstream sent an array where it should send a reasoning_details entry (an object)");
});
