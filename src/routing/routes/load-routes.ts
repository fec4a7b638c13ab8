import { createHash } from "node:crypto";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { isMap, isNode, isScalar, type Document } from "yaml";
import { isKeywordError } from "../../foundation/util/ajv-errors.js";
import { errorMessage } from "../../foundation/util/error-message.js";
import schema from "../../../schemas/routes.schema.json" with { type: "json" };
import { parseYamlWithLimits } from "./parse-yaml-limits.js";
import { readRoutesFile } from "./read-routes-file.js";
import { RouteTable, type RoutesFile } from "./route-table.js";

/** Problems reported per table: an operator fixes the first ones; locating thousands in a huge file would only cost time. */
const MAX_PROBLEMS = 20;

const validate = new Ajv2020({ allErrors: true, strict: false }).compile<RoutesFile>(schema);

/** One problem in a route table, located in its file. */
export interface RouteProblem {
  file: string;
  line: number;
  column: number;
  message: string;
}

export type LoadResult = { ok: true; table: RouteTable } | { ok: false; problems: RouteProblem[] };

/** What `checkRoutes` finds: plain data, so it can cross from a worker thread. */
export type CheckResult = { ok: true; data: RoutesFile; revision: string } | { ok: false; problems: RouteProblem[] };

export interface LoadOptions {
  /** Names of the loaded plugins; a provider naming any other is a problem. */
  knownPlugins: ReadonlySet<string>;
}

/** The table at `file`, read as the watcher reads it (a regular file, at most MAX_ROUTES_BYTES) and parsed in this thread. */
export async function loadRoutesFile(file: string, options: LoadOptions): Promise<LoadResult> {
  const read = await readRoutesFile(file);
  if (!read.ok) return { ok: false, problems: [cannotRead(file, read.message)] };
  return parseRoutes(read.text, file, options);
}

/** The problem reported for a path that holds no readable route table. */
export function cannotRead(file: string, reason: string): RouteProblem {
  return { file, line: 1, column: 1, message: `cannot read: ${reason}` };
}

/** parse → validate against the schema → check references → build an immutable table. */
export function parseRoutes(text: string, file: string, options: LoadOptions): LoadResult {
  const checked = checkRoutes(text, file, options);
  return checked.ok ? { ok: true, table: new RouteTable(checked.data, checked.revision, file) } : checked;
}

/** parse (within the limits of parse-yaml-limits) → validate against the schema → check references. */
export function checkRoutes(text: string, file: string, options: LoadOptions): CheckResult {
  const parsed = parseYamlWithLimits(text);
  const at = (offset: number, message: string): RouteProblem => {
    const { line, col } = parsed.lineCounter.linePos(offset);
    return { file, line, column: col, message };
  };
  if (!parsed.ok) return { ok: false, problems: parsed.errors.map((error) => at(error.offset, error.message)) };
  const { document, data } = parsed;
  if (!validate(data)) {
    const problems = (validate.errors ?? [])
      .filter(isUseful)
      .slice(0, MAX_PROBLEMS)
      .map((error) => at(locate(document, error), describe(error)));
    return { ok: false, problems: dedupe(problems) };
  }
  const problems: RouteProblem[] = [];
  for (const [id, provider] of Object.entries(data.providers)) {
    if (!options.knownPlugins.has(provider.plugin) && problems.length < MAX_PROBLEMS) {
      const known = [...options.knownPlugins].sort().join(", ");
      problems.push(
        at(offsetOf(document, `/providers/${id}/plugin`), `provider "${id}" names plugin "${provider.plugin}", which is not loaded (loaded: ${known})`),
      );
    }
  }
  data.models.forEach((model, index) => {
    if (!(model.provider in data.providers) && problems.length < MAX_PROBLEMS) {
      problems.push(
        at(offsetOf(document, `/models/${index}/provider`), `model "${model.name}" names provider "${model.provider}", which routes.yaml does not define`),
      );
    }
  });
  data.model_family?.strip.forEach((pattern, index) => {
    const invalid = regexProblem(pattern);
    if (invalid && problems.length < MAX_PROBLEMS)
      problems.push(at(offsetOf(document, `/model_family/strip/${index}`), `model_family.strip.${index}: ${invalid}`));
  });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, data, revision: revisionOf(text) };
}

/** Why `pattern` is no JavaScript regular expression, or undefined when it is one. */
function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (error) {
    return `not a regular expression (${errorMessage(error)})`;
  }
}

/** A table's revision: the content hash of its source text. */
export function revisionOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

export function formatProblem(problem: RouteProblem): string {
  return `${problem.file}:${problem.line}:${problem.column}: ${problem.message}`;
}

/** `oneOf` reports every branch; the branch errors already say what is wrong. */
function isUseful(error: ErrorObject): boolean {
  return error.keyword !== "oneOf" && error.keyword !== "if";
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "routes.yaml" : error.instancePath.slice(1).replaceAll("/", ".");
  if (isKeywordError(error, "additionalProperties")) return `${where}: unknown key "${error.params.additionalProperty}"`;
  if (isKeywordError(error, "enum")) return `${where}: must be one of ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
  // the one such rule: a dialects entry that names nothing
  if (error.keyword === "minProperties") return `${where}: names no dialect key (effort, disable, developer_role, token_limit)`;
  if (isKeywordError(error, "required")) return `${where}: missing required key "${error.params.missingProperty}"`;
  return `${where}: ${error.message ?? "is invalid"}`;
}

/** Where an operator should look: the offending key itself for an unknown key, else the value at fault. */
function locate(document: Document, error: ErrorObject): number {
  if (isKeywordError(error, "additionalProperties")) {
    const path = pathOf(error.instancePath);
    const key = keyOffset(document, [...path, error.params.additionalProperty]);
    if (key !== undefined) return key;
  }
  return offsetOf(document, error.instancePath);
}

function pathOf(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Start offset of the YAML node at a JSON pointer, or of its nearest existing parent. */
function offsetOf(document: Document, pointer: string): number {
  const path = pathOf(pointer);
  for (; path.length > 0; path.pop()) {
    const node = document.getIn(path, true);
    if (isNode(node) && node.range) return node.range[0];
    const key = keyOffset(document, path);
    if (key !== undefined) return key;
  }
  return document.contents?.range?.[0] ?? 0;
}

/** Scalar values such as `plugin: foo` have a range; so do map keys, used when the value is missing. */
function keyOffset(document: Document, path: string[]): number | undefined {
  const parent = path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === path[path.length - 1]);
  return isNode(pair?.key) ? pair.key.range?.[0] : undefined;
}

function dedupe(problems: RouteProblem[]): RouteProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = formatProblem(problem);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
