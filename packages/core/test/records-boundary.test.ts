import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Tools hand each other records, never sentences to parse back (issue 34): outside core's records module
 * (records.ts, records-legacy.ts, and events.ts which reads an old log through it), no source reads a tool's log
 * back, and no regular expression matches a tool's own lines or failure sentences.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const RECORDS_MODULE = [
  "packages/core/src/records.ts",
  "packages/core/src/records-legacy.ts",
  "packages/core/src/events.ts",
];

/** What the tools' lines and their failure sentences begin with or hold: a pattern over them reads another's text. */
const TOOL_TEXT = [
  /===/,
  /notification /,
  /not sent/,
  /Backup (?:started|done|failed)/,
  /Drill (?:started|done|failed)/,
  /the webhook (?:does|token|stayed|host)/,
  /the message (?:was refused|could not)/,
  /the panel (?:answered|refused|did not|is rate)/,
  /cannot reach the/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The regular expressions a source writes, as the TypeScript compiler reads it: its literals and RegExp's strings. */
function patternsIn(text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) found.push(node.text.slice(1, node.text.lastIndexOf("/")));
    if (ts.isNewExpression(node) && node.expression.getText() === "RegExp") {
      const first = node.arguments?.[0];
      if (first) found.push(first.getText());
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true));
  return found;
}

describe("the records' boundary", () => {
  const files = readdirSync(join(ROOT, "packages"))
    .flatMap((pkg) => {
      try {
        return sources(join(ROOT, "packages", pkg, "src"));
      } catch {
        return [];
      }
    })
    .map((file) => relative(ROOT, file))
    .filter((file) => !RECORDS_MODULE.includes(file));

  it("finds the sources it checks", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(patternsIn("// a /comment/\nconst a = /^=== Backup done ===(.*)$/u, b = new RegExp('x' + y);")).toEqual([
      "^=== Backup done ===(.*)$",
      "'x' + y",
    ]);
  });

  it("holds no pattern over a tool's lines or failure sentences outside the records module", () => {
    const found = files.flatMap((file) =>
      patternsIn(readFileSync(join(ROOT, file), "utf8"))
        .filter((pattern) => TOOL_TEXT.some((marker) => marker.test(pattern)))
        .map((pattern) => `${file}: /${pattern}/`),
    );
    expect(found).toEqual([]);
  });

  it("reads no tool's log back outside the records module", () => {
    const readers = files.filter((file) =>
      /\b(?:readLogTail|parseLogLine|legacyRecords)\b/.test(readFileSync(join(ROOT, file), "utf8")),
    );
    expect(readers).toEqual(["packages/core/src/log-lines.ts"]);
  });
});
