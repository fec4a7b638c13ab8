import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The recorded provider traffic the suite replays, kept in the repository (see test/fixtures/README.md). */
export const FIXTURES_DIR = fileURLToPath(new URL("../fixtures", import.meta.url));

/**
 * Reads a file under FIXTURES_DIR. A missing recording fails the test with
 * the path it looked for, so a test can never pass by reading nothing.
 */
export function readFixture(relativePath: string): string {
  const path = join(FIXTURES_DIR, relativePath);
  if (!existsSync(path)) throw new Error(`missing fixture file: test/fixtures/${relativePath} (${path})`);
  return readFileSync(path, "utf8");
}
