import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { GatewayError } from "../../foundation/errors/gateway-error.js";

/**
 * The page lives in `src/operations/dashboard/page/` as plain files (easy to
 * edit, no build step), uPlot in `node_modules/uplot/dist/`. Both are found
 * from the package root, so the same lookup works from `src/` under vitest
 * and from `dist/src/` after tsc.
 */
const PAGE_DIR = join("src", "operations", "dashboard", "page");
const UPLOT_DIR = join("node_modules", "uplot", "dist");

/** Every file `/dashboard/{asset}` serves, by the name in its URL: nothing else is ever read from disk. */
const ASSETS: Record<string, { file: string; type: string }> = {
  "base.css": { file: join(PAGE_DIR, "base.css"), type: "text/css; charset=utf-8" },
  "panels.css": { file: join(PAGE_DIR, "panels.css"), type: "text/css; charset=utf-8" },
  "common.js": { file: join(PAGE_DIR, "common.js"), type: "text/javascript; charset=utf-8" },
  "live.js": { file: join(PAGE_DIR, "live.js"), type: "text/javascript; charset=utf-8" },
  "replay-words.js": { file: join(PAGE_DIR, "replay-words.js"), type: "text/javascript; charset=utf-8" },
  "history.js": { file: join(PAGE_DIR, "history.js"), type: "text/javascript; charset=utf-8" },
  "providers.js": { file: join(PAGE_DIR, "providers.js"), type: "text/javascript; charset=utf-8" },
  "app.js": { file: join(PAGE_DIR, "app.js"), type: "text/javascript; charset=utf-8" },
  "uplot.js": { file: join(UPLOT_DIR, "uPlot.iife.min.js"), type: "text/javascript; charset=utf-8" },
  "uplot.css": { file: join(UPLOT_DIR, "uPlot.min.css"), type: "text/css; charset=utf-8" },
};

/** Scripts and styles come from the gateway itself, connections go only to it; no inline script runs. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const cache = new Map<string, Buffer>();

/** `GET /dashboard`: no auth for the page itself; it asks for the key and sends it over the WebSocket and with each request. */
export function serveDashboard(_request: IncomingMessage, response: ServerResponse): void {
  send(response, read(join(PAGE_DIR, "dashboard.html")), "text/html; charset=utf-8");
}

/** `GET /dashboard/{asset}`: one of the page's own files, or a 404. */
export function serveDashboardAsset(name: string, response: ServerResponse): void {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) throw new GatewayError("not_found", `the dashboard has no file ${JSON.stringify(name.slice(0, 80))}`);
  send(response, read(asset.file), asset.type);
}

function send(response: ServerResponse, body: Buffer, type: string): void {
  response.writeHead(200, {
    "content-type": type,
    "content-length": String(body.length),
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
  });
  response.end(body);
}

function read(file: string): Buffer {
  let body = cache.get(file);
  if (body) return body;
  const root = packageRoot(dirname(fileURLToPath(import.meta.url)), file);
  if (!root) throw new GatewayError("internal_error", `dashboard file not found (${file} is missing from the install)`);
  body = readFileSync(join(root, file));
  cache.set(file, body);
  return body;
}

function packageRoot(start: string, file: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, file))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
