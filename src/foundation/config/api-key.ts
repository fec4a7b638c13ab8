import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The API key is mandatory, loopback included (docs/operators.md#the-api-key). Without
 * CARRIERD_API_KEY a random key is generated once, stored 0600 in
 * `$CARRIERD_HOME/api_key`, and reused on later starts.
 */
export function ensureApiKey(home: string, configured: string | undefined): { key: string; file?: string; generated: boolean; tightened?: boolean } {
  if (configured) return { key: configured, generated: false };
  const file = join(home, "api_key");
  if (existsSync(file)) {
    const stored = readFileSync(file, "utf8").trim();
    if (stored) {
      // a copied or restored key file may have become readable by others: take that back
      const tightened = (statSync(file).mode & 0o077) !== 0;
      if (tightened) chmodSync(file, 0o600);
      return { key: stored, file, generated: false, tightened };
    }
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const key = `cd-${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { key, file, generated: true };
}
