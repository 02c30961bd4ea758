import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every setting's default sits in its one declaration (issue 34): GAME_ADDRESS's and BACKUP_OWNER's in core's shared
 * fields, KEEP_SNAPSHOTS' in @mcops/cloud's keep.ts. The compiler reads every source: a default written again as code
 * (a string literal, a number given to a keep setting) is found; help texts and comments that quote it are not code.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const files = readdirSync(join(ROOT, "packages")).flatMap((pkg) => {
  try {
    return sources(join(ROOT, "packages", pkg, "src"));
  } catch {
    return [];
  }
});

/** Where `match` holds of a node, as `file: text`. */
function find(match: (node: ts.Node) => boolean): string[] {
  return files.flatMap((file) => {
    const found: string[] = [];
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (match(node)) found.push(`${relative(ROOT, file)}: ${node.getText()}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  });
}

describe("a setting's default", () => {
  it("of GAME_ADDRESS and BACKUP_OWNER is written once, in core's shared fields", () => {
    const literal = (value: string) => (node: ts.Node) => ts.isStringLiteral(node) && node.text === value;
    expect(find(literal("127.0.0.1:25565"))).toEqual(['packages/core/src/config/shared.ts: "127.0.0.1:25565"']);
    expect(find(literal("988:988"))).toEqual(['packages/core/src/config/shared.ts: "988:988"']);
  });

  it("of KEEP_SNAPSHOTS is declared once, and no keep setting falls back to a number of its own", () => {
    const declared = find((node) => ts.isVariableDeclaration(node) && node.name.getText() === "KEEP_SNAPSHOTS_DEFAULT");
    expect(declared).toEqual(["packages/cloud/src/keep.ts: KEEP_SNAPSHOTS_DEFAULT = 2"]);
    const fallback = find(
      (node) =>
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken &&
        /keep/i.test(node.left.getText()) &&
        ts.isNumericLiteral(node.right),
    );
    expect(fallback).toEqual([]);
  });
});
