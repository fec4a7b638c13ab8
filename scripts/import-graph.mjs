// The folder graph of carrierd's imports at two levels: which layer (a
// top-level folder of src/, or plugins/) imports from which, and which folder
// below them (or plugin) imports from which. Imports must run one way, down
// the floors docs/architecture.md lists; a cycle between folders means some
// file imports from a folder that depends on it.
//   node scripts/import-graph.mjs      print both graphs, top to ground, and every arrow running back up
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

/** The layer a folder belongs to: `src/<top-level folder>`, or `plugins` for every plugin. */
export function layerOf(folder) {
  return folder.startsWith("plugins/") ? "plugins" : folder.split("/").slice(0, 2).join("/");
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

/** The same imports seen from the layers: the ones that cross from one top-level folder into another. */
export function layerGraph(root = defaultRoot) {
  const { folders, edges } = folderGraph(root);
  const layers = [...new Set(folders.map(layerOf))].sort();
  const crossing = edges
    .map((edge) => ({ ...edge, fromFolder: layerOf(edge.fromFolder), toFolder: layerOf(edge.toFolder) }))
    .filter((edge) => edge.fromFolder !== edge.toFolder);
  return { folders: layers, edges: crossing };
}

/** The folders docs/architecture.md lists under "## Floors", top to ground; `plugins/*` stands for every plugin folder. */
export function documentedFloors(root = defaultRoot) {
  const text = readFileSync(join(root, "docs/architecture.md"), "utf8");
  const section = text.split(/^## /m).find((part) => part.startsWith("Floors"));
  if (!section) throw new Error('docs/architecture.md has no "## Floors" section');
  return [...section.matchAll(/^\d+\.\s+`((?:src|plugins)\/[^`]+?)\/?`/gm)].map((match) => match[1]);
}

/**
 * The layers in the order the floors list them, top to ground, and the layers
 * whose floors it does not list together (a layer's floors are one run of the list).
 */
export function documentedLayers(floors) {
  const runs = floors.map((floor) => layerOf(floor === "plugins/*" ? "plugins/" : floor)).filter((layer, at, all) => layer !== all[at - 1]);
  const layers = [...new Set(runs)];
  return { layers, split: layers.filter((layer) => runs.indexOf(layer) !== runs.lastIndexOf(layer)) };
}

/** Where a folder (or layer) stands in a documented order; -1 if it is not listed. */
export function floorOf(folder, floors) {
  return floors.indexOf(folder.startsWith("plugins/") ? "plugins/*" : folder);
}

/** The imports that run from a lower floor to a higher one; a folder the order does not list is judged apart (`unlisted`). */
export function upward(edges, floors) {
  return edges.filter((edge) => {
    const from = floorOf(edge.fromFolder, floors);
    const to = floorOf(edge.toFolder, floors);
    return from >= 0 && to >= 0 && to < from;
  });
}

/** The folders (or layers) of a graph that a documented order does not list. */
export function unlisted(folders, floors) {
  return folders.filter((folder) => floorOf(folder, floors) < 0);
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

/** Each cycle between folders (or, given the layer graph, between layers), with every import that runs inside it. */
export function cycles(root = defaultRoot, graph = folderGraph(root)) {
  const { folders, edges } = graph;
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

/** The lines printing one level: its floors top to ground, each with the floors it imports, then every cycle and every arrow running back up. */
function report(title, graph, documented) {
  const lines = [`${title}, top to ground:`];
  const targets = (floor) => [...new Set(graph.edges.filter((edge) => floor.includes(edge.fromFolder)).map((edge) => edge.toFolder))];
  const place = (floor) => Math.min(...floor.map((folder) => floorOf(folder, documented)).map((at) => (at < 0 ? Infinity : at)));
  // in the documented order; a floor the docs do not list comes last, in the order its imports allow
  const floors = components(graph.folders, graph.edges).reverse();
  for (const floor of floors.sort((a, b) => place(a) - place(b))) {
    const below = targets(floor).filter((target) => !floor.includes(target));
    lines.push(`  ${floor.join(" ⇄ ")}${below.length > 0 ? ` → ${below.sort((a, b) => floorOf(a, documented) - floorOf(b, documented)).join(", ")}` : ""}`);
  }
  const found = cycles(undefined, graph);
  for (const cycle of found) {
    lines.push(`cycle: ${cycle.folders.join(", ")}`);
    for (const edge of cycle.imports) lines.push(`  ${describe(edge)}`);
  }
  const missing = unlisted(graph.folders, documented);
  if (missing.length > 0) lines.push(`not listed in docs/architecture.md: ${missing.join(", ")}`);
  const up = upward(graph.edges, documented);
  if (up.length > 0) lines.push(`running back up the floors of docs/architecture.md (${up.length}):`);
  for (const edge of up) lines.push(`  ${describe(edge)}`);
  return { lines, faults: found.length + missing.length + up.length };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const floors = documentedFloors();
  const { layers, split } = documentedLayers(floors);
  const byLayer = report("layers (top-level folders)", layerGraph(), layers);
  const byFolder = report("floors (every folder)", folderGraph(), floors);
  for (const layer of split) byLayer.lines.push(`docs/architecture.md lists the floors of ${layer} apart`);
  console.log([...byLayer.lines, "", ...byFolder.lines].join("\n"));
  process.exitCode = byLayer.faults + split.length + byFolder.faults === 0 ? 0 : 1;
}
