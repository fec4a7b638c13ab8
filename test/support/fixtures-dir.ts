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

/** Recorded provider streams (vercel/ai `__fixtures__`): `<name>.chunks.txt`, one JSON payload per line, and `<name>.json`, the same answer whole. */
export const CHUNKS_DIR = join(FIXTURES_DIR, "chunks");

/** The payload lines of a recorded stream (`deepseek/deepseek-reasoning`). */
export function fixtureLines(name: string): string[] {
  return readFixture(`chunks/${name}.chunks.txt`)
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** A recorded body under fixtures/chunks (`openai/openai-error.1.json`), parsed. */
export function fixtureJson(file: string): Record<string, unknown> {
  return JSON.parse(readFixture(`chunks/${file}`)) as Record<string, unknown>;
}
