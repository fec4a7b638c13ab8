import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The API key is mandatory, loopback included (SPEC §2). Without
 * CARRIERD_API_KEY a random key is generated once, stored 0600 in
 * `$CARRIERD_HOME/api_key`, and reused on later starts.
 */
export function ensureApiKey(home: string, configured: string | undefined): { key: string; file?: string; generated: boolean } {
  if (configured) return { key: configured, generated: false };
  const file = join(home, "api_key");
  if (existsSync(file)) {
    const stored = readFileSync(file, "utf8").trim();
    if (stored) return { key: stored, file, generated: false };
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const key = `cd-${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { key, file, generated: true };
}
