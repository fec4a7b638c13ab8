// The folder graph of carrierd's imports: which folder of src/ (or plugin of
// plugins/) imports from which. Imports must run one way, downward; a cycle
// between folders means some file imports from a folder that depends on it.
//   node scripts/import-graph.mjs      print the floors, top to ground, and any cycle
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const defaultRoot = fileURLToPath(new URL("..", import.meta.url));
const scannedTrees = ["src", "plugins"];

/**
 * The folder a repository path belongs to: under src/ the file's own folder
 * (a layer's subfolders are floors of their own, `src/storage/sqlite` above
 * `src/storage`), under plugins/ the plugin (`plugins/<name>`); undefined
 * outside them.
 */
export function folderOf(path) {
  const parts = path.split(sep).join("/").split("/");
  if (!scannedTrees.includes(parts[0]) || parts.length < 3) return undefined;
  return parts[0] === "src" ? parts.slice(0, -1).join("/") : `${parts[0]}/${parts[1]}`;
}

/** Every source file of src/ and plugins/, tests and declarations left out, as repository paths. */
export function sourceFiles(root = defaultRoot) {
  const files = [];
  for (const tree of scannedTrees) {
    for (const name of readdirSync(join(root, tree), { recursive: true, encoding: "utf8" })) {
      if (!name.endsWith(".ts") || name.endsWith(".test.ts") || name.endsWith(".d.ts")) continue;
      files.push(join(tree, name).split(sep).join("/"));
    }
  }
  return files.sort();
}

/**
 * The relative imports of one file, `import … from`, `export … from`,
 * `import type` and `import("…")` alike: the compiler's own pre-parser reads
 * them, so a multi-line import or one in a comment is judged as tsc judges it.
 */
export function importsOf(root, file) {
  const text = readFileSync(join(root, file), "utf8");
  const lineStarts = ts.computeLineStarts(text);
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .filter(({ fileName }) => fileName.startsWith("./") || fileName.startsWith("../"))
    .map(({ fileName, pos }) => ({
      from: file,
      line: ts.computeLineAndCharacterOfPosition(lineStarts, pos).line + 1,
      specifier: fileName,
      to: relative(root, resolve(root, dirname(file), fileName))
        .split(sep)
        .join("/"),
    }));
}

/** The folders and the imports that cross from one folder into another. */
export function folderGraph(root = defaultRoot) {
  const folders = new Set();
  const edges = [];
  for (const file of sourceFiles(root)) {
    const from = folderOf(file);
    folders.add(from);
    for (const found of importsOf(root, file)) {
      const to = folderOf(found.to);
      if (to === undefined || to === from) continue;
      folders.add(to);
      edges.push({ ...found, fromFolder: from, toFolder: to });
    }
  }
  return { folders: [...folders].sort(), edges };
}

/** Strongly connected components (Tarjan), each a sorted list of folders; ground floors come first. */
export function components(folders, edges) {
  const next = new Map(folders.map((folder) => [folder, new Set()]));
  for (const edge of edges) next.get(edge.fromFolder).add(edge.toFolder);
  const index = new Map();
  const lowest = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (folder) => {
    index.set(folder, index.size);
    lowest.set(folder, index.get(folder));
    stack.push(folder);
    onStack.add(folder);
    for (const target of next.get(folder)) {
      if (!index.has(target)) {
        visit(target);
        lowest.set(folder, Math.min(lowest.get(folder), lowest.get(target)));
      } else if (onStack.has(target)) {
        lowest.set(folder, Math.min(lowest.get(folder), index.get(target)));
      }
    }
    if (lowest.get(folder) !== index.get(folder)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== folder);
    found.push(component.sort());
  };
  for (const folder of folders) if (!index.has(folder)) visit(folder);
  return found;
}

/** Each cycle between folders, with every import that runs inside it. */
export function cycles(root = defaultRoot) {
  const { folders, edges } = folderGraph(root);
  return components(folders, edges)
    .filter((component) => component.length > 1)
    .map((component) => ({
      folders: component,
      imports: edges.filter((edge) => component.includes(edge.fromFolder) && component.includes(edge.toFolder)),
    }));
}

/** One line per import, `src/a/file.ts:3 → src/b (../b/thing.js)`. */
export function describe(edge) {
  return `${edge.from}:${edge.line} → ${edge.toFolder} (${edge.specifier})`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { folders, edges } = folderGraph();
  const floors = components(folders, edges).reverse();
  console.log("floors, top to ground:");
  for (const floor of floors) console.log(`  ${floor.join(" ⇄ ")}`);
  const found = cycles();
  for (const cycle of found) {
    console.log(`\ncycle: ${cycle.folders.join(", ")}`);
    for (const edge of cycle.imports) console.log(`  ${describe(edge)}`);
  }
  process.exitCode = found.length === 0 ? 0 : 1;
}
