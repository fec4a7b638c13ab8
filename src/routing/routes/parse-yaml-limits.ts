import { Alias, Composer, isAlias, isCollection, isPair, LineCounter, Parser, type Document } from "yaml";
import { isRecord } from "../../foundation/util/json-readers.js";

/**
 * Deepest nesting of maps and lists accepted. The schema needs under ten;
 * the YAML composer recurses per level, so a file nested thousands deep
 * would otherwise end in a stack overflow rather than a located error.
 */
export const MAX_YAML_DEPTH = 64;
/** Alias expansions allowed while building the data (yaml's own default): a billion-laughs file stops here. */
export const MAX_ALIAS_EXPANSIONS = 100;

export interface YamlError {
  offset: number;
  message: string;
}

export type ParsedYaml =
  { ok: true; lineCounter: LineCounter; document: Document; data: unknown } | { ok: false; lineCounter: LineCounter; errors: YamlError[] };

/**
 * `parseDocument` + `toJS`, with the two resource limits checked where they
 * can be located: nesting on the concrete syntax tree (which the parser
 * builds without recursion) before anything recurses over it, and alias
 * expansion while the data is built, reported at the first alias.
 */
export function parseYamlWithLimits(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const tokens = [...new Parser(lineCounter.addNewLine).parse(text)];
  const tooDeep = firstTooDeep(tokens);
  if (tooDeep !== undefined) {
    return { ok: false, lineCounter, errors: [{ offset: tooDeep, message: `nested deeper than ${MAX_YAML_DEPTH} levels` }] };
  }
  const composer = new Composer({ uniqueKeys: true, prettyErrors: false });
  const documents = [...composer.compose(tokens, true, text.length)];
  const document = documents[0];
  if (documents.length > 1) {
    return {
      ok: false,
      lineCounter,
      errors: [{ offset: documents[1].range[0], message: "more than one YAML document (a second `---`); a route table is one" }],
    };
  }
  if (document.errors.length > 0) {
    return { ok: false, lineCounter, errors: document.errors.slice(0, 20).map((error) => ({ offset: error.pos[0], message: error.message.split("\n")[0] })) };
  }
  try {
    const data: unknown = document.toJS({ maxAliasCount: MAX_ALIAS_EXPANSIONS });
    return { ok: true, lineCounter, document, data };
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    // yaml throws on an alias that expands too far ("excessive alias count") or names no anchor
    const alias = firstAlias(document);
    const message = /excessive alias count/i.test(error.message)
      ? `aliases expand past ${MAX_ALIAS_EXPANSIONS} nodes (a YAML alias bomb?); a route table needs no aliases of aliases`
      : error.message;
    return { ok: false, lineCounter, errors: [{ offset: alias?.range?.[0] ?? 0, message }] };
  }
}

/** The offset of the first collection nested past MAX_YAML_DEPTH in the CST, walked with a stack of its own. */
function firstTooDeep(tokens: readonly object[]): number | undefined {
  const stack: { token: unknown; depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (token === null || typeof token !== "object") continue;
    // a token is an object with a type; the lists of its items are arrays
    const type = isRecord(token) ? token.type : undefined;
    const nested = type === "block-map" || type === "block-seq" || type === "flow-collection" ? depth + 1 : depth;
    if (nested > MAX_YAML_DEPTH && isRecord(token) && typeof token.offset === "number") return token.offset;
    for (const child of Object.values(token)) {
      if (child !== null && typeof child === "object") stack.push({ token: child, depth: nested });
    }
  }
  return undefined;
}

/** The first alias in the document, in source order. */
function firstAlias(document: Document): Alias | undefined {
  let first: Alias | undefined;
  const stack: unknown[] = [document.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      if (!first || (node.range?.[0] ?? 0) < (first.range?.[0] ?? 0)) first = node;
    } else if (isCollection(node)) {
      for (const item of node.items) stack.push(item);
    } else if (isPair(node)) {
      stack.push(node.key, node.value);
    }
  }
  return first;
}
