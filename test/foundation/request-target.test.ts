import type { IncomingMessage } from "node:http";
import { expect, test } from "vitest";
import { PLAIN_PATH, requestTarget } from "../../src/http/request-target.js";

/**
 * A plain request target is taken as its own pathname without parsing
 * (docs/performance.md#the-requests-edges): that holds only if the
 * URL parser gives every target PLAIN_PATH accepts back unchanged.
 */
const parsedPath = (target: string) => new URL(target, "http://carrierd.local").pathname;
const targetOf = (url: string) => requestTarget({ url } as IncomingMessage);

test("every target PLAIN_PATH accepts is its own pathname, as the URL parser reads it", () => {
  const alphabet = ["/", "/", "/", "a", "Z", "0", "_", "~", "-", ".", "%", "2e", "?", "#", "\\", " ", "\t", ":", "@", "é", "{", "`", "..", "//"];
  let accepted = 0;
  // a fixed generator (xorshift), so a failure is the same on every run
  let seed = 0x2f6b1c3d;
  const next = () => ((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5), (seed >>> 0) / 2 ** 32);
  for (let i = 0; i < 200_000; i++) {
    let target = "/";
    const length = Math.floor(next() * 12);
    for (let j = 0; j < length; j++) target += alphabet[Math.floor(next() * alphabet.length)];
    if (!PLAIN_PATH.test(target)) continue;
    accepted++;
    expect(parsedPath(target), target).toBe(target);
  }
  expect(accepted).toBeGreaterThan(1000);
});

test.each(["/", "/v1/chat/completions", "/v1/responses/resp_abc-123/input_items", "/a/", "/a.b/c~d", "/-", "/~", "/v1beta/models/m-3.1:generateContent"])(
  "%s is plain",
  (target) => {
    expect(PLAIN_PATH.test(target)).toBe(true);
    expect(targetOf(target)!.pathname).toBe(target);
    expect(targetOf(target)!.url.href).toBe(`http://carrierd.local${target}`);
  },
);

test.each(["/a/..", "/a/.", "/.well-known", "/a//b", "//x", "/a?b=1", "/a#b", "/%2e", "/a b", "/é", "/a\\b", "", "a"])("%j is parsed", (target) => {
  expect(PLAIN_PATH.test(target)).toBe(false);
  expect(targetOf(target)!.pathname).toBe(parsedPath(target));
});

test.each([
  ["/v1beta/models/m:streamGenerateContent?alt=sse", "/v1beta/models/m:streamGenerateContent"],
  ["/a?b=1&c=d", "/a"],
  ["/a/?", "/a/"],
])("%s: a plain path with a plain query is read without parsing, its URL parsed when asked", (target, pathname) => {
  expect(targetOf(target)!.pathname).toBe(pathname);
  expect(parsedPath(target)).toBe(pathname);
  expect(targetOf(target)!.url.href).toBe(new URL(target, "http://carrierd.local").href);
});

test.each(["/a?b=%20", "/a?b#c", "/a?b c", "/a/..?b", "?a"])("%j, a query that is not plain, is parsed", (target) => {
  expect(targetOf(target)!.pathname).toBe(parsedPath(target));
});

test("a target no URL can be made of is undefined", () => {
  expect(targetOf("//[")).toBeUndefined();
});
