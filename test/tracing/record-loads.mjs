// Preloaded with `node --import`: every module the process resolves, ES module or CommonJS, is appended to
// $LOADED_MODULES_FILE, one path or URL a line (test/tracing/tracing-off.test.ts reads it).
import Module, { register } from "node:module";
import { appendFileSync } from "node:fs";

const file = process.env.LOADED_MODULES_FILE;
register(new URL("./record-loads-hooks.mjs", import.meta.url), { data: { file } });
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const resolved = resolveFilename.call(this, request, ...rest);
  appendFileSync(file, `${resolved}\n`);
  return resolved;
};
