// The module resolution hook record-loads.mjs registers: each resolved ES module's URL, appended to the file.
import { appendFileSync } from "node:fs";

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, `${result.url}\n`);
  return result;
}
