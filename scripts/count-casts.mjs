// Counts type assertions (`x as T`, `<T>x`) in the shipped TypeScript:
// src/**/*.ts and plugins/**/*.ts, tests and `.d.ts` files aside, `as const`
// not counted (it asserts nothing about a value's type). Prints one line per
// file that has any, most first, then the total.
//   npm run casts             the table
//   npm run casts -- --total  the total alone
//   npm run casts -- plugins  only files under plugins/ (any path prefixes)
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const totalOnly = args.includes("--total");
const prefixes = args.filter((arg) => !arg.startsWith("--"));

function* typeScriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* typeScriptFiles(path);
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !/\.test\.ts$/.test(entry.name)) {
      yield path;
    }
  }
}

function isAsConst(node) {
  return ts.isTypeReferenceNode(node.type) && ts.isIdentifier(node.type.typeName) && node.type.typeName.text === "const";
}

function countCasts(path) {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  let count = 0;
  const visit = (node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isAsConst(node)) count++;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return count;
}

const rows = [];
for (const top of ["src", "plugins"]) {
  for (const path of typeScriptFiles(join(root, top))) {
    const name = relative(root, path).split("\\").join("/");
    if (prefixes.length > 0 && !prefixes.some((prefix) => name.startsWith(prefix))) continue;
    const count = countCasts(path);
    if (count > 0) rows.push({ name, count });
  }
}
rows.sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
const total = rows.reduce((sum, row) => sum + row.count, 0);
if (totalOnly) {
  console.log(total);
} else {
  const width = Math.max(5, ...rows.map((row) => String(row.count).length));
  for (const row of rows) console.log(`${String(row.count).padStart(width)}  ${row.name}`);
  console.log(`${String(total).padStart(width)}  total (${rows.length} files)`);
}
