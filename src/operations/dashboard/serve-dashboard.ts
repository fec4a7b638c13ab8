import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { GatewayError } from "../../foundation/errors/gateway-error.js";

/**
 * The page lives in `src/operations/dashboard/dashboard.html` as a plain file (easy to
 * edit, no build step). It is found from the package root, so the same
 * lookup works from `src/` under vitest and from `dist/src/` after tsc.
 */
const PAGE_PATH = join("src", "operations", "dashboard", "dashboard.html");

interface Page {
  html: string;
  headers: Record<string, string>;
}

let cached: Page | undefined;

/** `GET /dashboard`: no auth for the page itself; it asks for the key and sends it over the WebSocket. */
export function serveDashboard(_request: IncomingMessage, response: ServerResponse): void {
  const page = (cached ??= loadPage());
  response.writeHead(200, page.headers);
  response.end(page.html);
}

function loadPage(): Page {
  const root = packageRoot(dirname(fileURLToPath(import.meta.url)));
  if (!root) throw new GatewayError("internal_error", "dashboard page not found (src/operations/dashboard/dashboard.html is missing from the install)");
  const html = readFileSync(join(root, PAGE_PATH), "utf8");
  // the only script allowed is the page's own inline one, pinned by its hash
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => `'sha256-${createHash("sha256").update(match[1]).digest("base64")}'`);
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.join(" ")}`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    html,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-length": String(Buffer.byteLength(html)),
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-cache",
    },
  };
}

function packageRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, PAGE_PATH))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
