import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect, test } from "vitest";
import {
  cycles,
  describe as describeImport,
  documentedFloors,
  documentedLayers,
  floorOf,
  folderGraph,
  layerGraph,
  unlisted,
  upward,
} from "../../scripts/import-graph.mjs";

const graph = folderGraph();
const floors = documentedFloors();

test("the top-level folders are the layers: each listed as one run of floors, every import running down them", () => {
  const { layers, split } = documentedLayers(floors);
  expect(split, "layers whose floors docs/architecture.md lists apart").toEqual([]);
  const byLayer = layerGraph();
  expect(unlisted(byLayer.folders, layers), "top-level folders missing from the floors").toEqual([]);
  expect(
    upward(byLayer.edges, layers).map((edge) => describeImport(edge)),
    "imports from a lower layer to a higher one",
  ).toEqual([]);
});

test("no file imports from a folder that depends on it (no cycle between folders)", () => {
  const found = cycles().map((cycle) => {
    // of the imports inside a cycle, the ones running up the documented floors are the ones to move
    const runningUp = cycle.imports.filter((edge) => floorOf(edge.toFolder, floors) < floorOf(edge.fromFolder, floors));
    return `${cycle.folders.join(" ⇄ ")}\n${(runningUp.length > 0 ? runningUp : cycle.imports).map((edge) => `  ${describeImport(edge)}`).join("\n")}`;
  });
  expect(found.join("\n"), "cycles between folders, with the imports that run back up").toBe("");
});

test("docs/architecture.md lists every folder once, and every import runs down its floors", () => {
  expect(new Set(floors).size, "a folder listed twice").toBe(floors.length);
  const listed = (folder: string) => floorOf(folder, floors) >= 0;
  expect(
    graph.folders.filter((folder) => !listed(folder)),
    "folders missing from the floors",
  ).toEqual([]);
  expect(
    floors.filter((floor) => floor !== "plugins/*" && !graph.folders.includes(floor)),
    "floors naming no folder",
  ).toEqual([]);
  expect(
    upward(graph.edges, floors).map((edge) => describeImport(edge)),
    "imports from a lower floor to a higher one",
  ).toEqual([]);
});

test("the graph reads every kind of import a file can make, and names a cycle", () => {
  // the check is only as good as its reading: type-only, re-exports, multi-line and dynamic imports are all edges
  const root = mkdtempSync(join(tmpdir(), "carrierd-imports-"));
  try {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write(
      "src/top/main.ts",
      [
        'import type { B } from "../typed/b.js";',
        "import {",
        "  one,",
        "  two,",
        '} from "../multi/c.js";',
        'export * from "../again/d.js";',
        '// import { not } from "../commented/e.js";',
        'const late = await import("../late/f.js");',
        'import "./same-folder.js";',
        'import yaml from "yaml";',
      ].join("\n"),
    );
    write("src/top/same-folder.ts", "");
    write("src/top/main.test.ts", 'import "../tested/g.js";');
    write("src/ground/h.ts", 'import "../upper/i.js";');
    write("src/upper/i.ts", 'import type { H } from "../ground/h.js";');
    write("plugins/demo/index.ts", 'import { definePlugin } from "../../src/providers/plugin-api.js";');
    // no two folders import each other here, yet the layers src/left and src/right do
    write("src/left/high/j.ts", 'import "../../right/k.js";');
    write("src/right/k.ts", 'import "../left/low/l.js";');
    write("src/left/low/l.ts", "");
    const { edges } = folderGraph(root);
    const targets = (folder: string) => edges.filter((edge) => edge.fromFolder === folder).map((edge) => `${edge.toFolder}:${edge.line}`);
    expect(targets("src/top")).toEqual(["src/typed:1", "src/multi:5", "src/again:6", "src/late:8"]);
    expect(targets("plugins/demo")).toEqual(["src/providers:1"]);
    const found = cycles(root);
    expect(found.map((cycle) => cycle.folders)).toEqual([["src/ground", "src/upper"]]);
    expect(found[0]!.imports.map((edge) => describeImport(edge)).sort()).toEqual([
      "src/ground/h.ts:1 → src/upper (../upper/i.js)",
      "src/upper/i.ts:1 → src/ground (../ground/h.js)",
    ]);
    const layers = layerGraph(root);
    expect(cycles(root, layers).map((cycle) => cycle.folders)).toEqual([
      ["src/ground", "src/upper"],
      ["src/left", "src/right"],
    ]);
    expect(upward(layers.edges, ["src/left", "src/right"]).map((edge) => describeImport(edge))).toEqual(["src/right/k.ts:1 → src/left (../left/low/l.js)"]);
    expect(documentedLayers(["plugins/*", "src/a/x", "src/b", "src/a"])).toEqual({
      layers: ["plugins", "src/a", "src/b"],
      split: ["src/a"],
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
