import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { ERROR_TABLE } from "../../src/foundation/errors/gateway-error.js";
import { codeSpans, readDoc, REPO, section, tableRows } from "./markdown.js";

/**
 * docs/api.md, "Errors", against the one table of error codes in
 * src/foundation/errors/gateway-error.ts: every code has a row with its status and
 * type, and every row's code exists.
 */
const TABLE = 'docs/api.md, section "Errors"';

interface Row {
  code: string;
  status: number;
  type: string;
}

function documentedRows(): Row[] {
  return tableRows(section(readDoc("docs/api.md"), "Errors")).map((cells) => ({
    code: codeSpans(cells[0] ?? "")[0] ?? "",
    // "502, or the upstream's": the code's own status first
    status: Number(/^\d{3}/.exec(cells[1] ?? "")?.[0]),
    type: codeSpans(cells[2] ?? "")[0] ?? "",
  }));
}

const codes = Object.entries(ERROR_TABLE) as [string, { status: number; type: string }][];

test("every error code carrierd answers with has a row in docs/api.md", () => {
  const documented = new Set(documentedRows().map((row) => row.code));
  const missing = codes.filter(([code]) => !documented.has(code));
  expect(
    missing.map(([code, { status, type }]) => `${TABLE} lacks ${code}: add the row | \`${code}\` | ${status} | \`${type}\` | when it is answered |`),
  ).toEqual([]);
});

test("each documented code has the status and type the code gives it", () => {
  const table = new Map(codes);
  const wrong = documentedRows().flatMap((row) => {
    const actual = table.get(row.code);
    if (!actual)
      return [`${TABLE} has a row for \`${row.code}\`, which is no code in src/foundation/errors/gateway-error.ts: remove it, or add the code there`];
    if (actual.status === row.status && actual.type === row.type) return [];
    return [`${TABLE}: the row of \`${row.code}\` says ${row.status} \`${row.type}\`; the code answers ${actual.status} \`${actual.type}\``];
  });
  expect(wrong).toEqual([]);
});

test("the WebSocket's error codes are the ones docs/events.md lists under Subscribing", () => {
  const source = readFileSync(join(REPO, "src", "events", "event-connection.ts"), "utf8");
  const inCode = new Set([...source.matchAll(/\bcode: "([a-z_]+)"/g)].map((match) => match[1]!));
  expect(inCode.size).toBeGreaterThan(0);
  const listed = /^Codes: ([\s\S]*?)\.(?: |$)/m.exec(section(readDoc("docs/events.md"), "Subscribing"))?.[1] ?? "";
  const documented = new Set(codeSpans(listed));
  const missing = [...inCode].filter((code) => !documented.has(code)).map((code) => `docs/events.md, "Subscribing": add \`${code}\` to the "Codes:" sentence`);
  const stale = [...documented]
    .filter((code) => !inCode.has(code))
    .map((code) => `docs/events.md, "Subscribing": \`${code}\` is no code of src/events/event-connection.ts`);
  expect([...missing, ...stale]).toEqual([]);
});
