import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { ensureApiKey } from "../../src/foundation/config/api-key.js";

let parent: string;
let home: string;
afterEach(() => rmSync(parent, { recursive: true, force: true }));
/** A home that does not exist yet, so the test sees how carrierd creates it. */
const freshHome = () => {
  parent = mkdtempSync(join(tmpdir(), "carrierd-key-"));
  home = join(parent, "home");
};

test("without CARRIERD_API_KEY a random key is generated into a 0600 file in a 0700 home, then reused", () => {
  freshHome();
  const first = ensureApiKey(home, undefined);
  expect(first.generated).toBe(true);
  expect(first.key).toMatch(/^cd-[A-Za-z0-9_-]{32}$/);
  expect(statSync(first.file!).mode & 0o777).toBe(0o600);
  expect(statSync(home).mode & 0o777).toBe(0o700);
  expect(readFileSync(first.file!, "utf8")).toBe(`${first.key}\n`);
  const second = ensureApiKey(home, undefined);
  expect(second).toMatchObject({ key: first.key, generated: false, tightened: false });
});

test("two homes get different keys", () => {
  freshHome();
  const a = ensureApiKey(join(home, "a"), undefined).key;
  const b = ensureApiKey(join(home, "b"), undefined).key;
  expect(a).not.toBe(b);
});

test("a configured key wins and writes nothing", () => {
  freshHome();
  expect(ensureApiKey(home, "chosen")).toEqual({ key: "chosen", generated: false });
  expect(() => statSync(join(home, "api_key"))).toThrow();
});

test("a hand-written key file is trimmed, and made private again if others could read it", () => {
  freshHome();
  ensureApiKey(home, undefined);
  const file = join(home, "api_key");
  writeFileSync(file, "  my-own-key \n");
  chmodSync(file, 0o644);
  expect(ensureApiKey(home, undefined)).toMatchObject({ key: "my-own-key", tightened: true });
  expect(statSync(file).mode & 0o777).toBe(0o600);
});

test("an empty key file is replaced by a generated key", () => {
  freshHome();
  ensureApiKey(home, undefined);
  writeFileSync(join(home, "api_key"), "\n");
  expect(ensureApiKey(home, undefined).generated).toBe(true);
});
