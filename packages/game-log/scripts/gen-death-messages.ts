import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * `node packages/game-log/scripts/gen-death-messages.ts`: writes packages/game-log/src/death-templates.generated.ts,
 * the English death message templates of every Java release from 1.12 to the newest one minecraft-data has language
 * data for.
 *
 * The templates come from the game's own en_us language files as minecraft-data ships them: every `death.*` key,
 * positional `%s` normalised to `%1$s`, `%2$s`, ..., de-duplicated and sorted. Only templates that begin with the dying
 * player (`%1$s `) are kept; the few `death.*` keys that do not (a link label, the "message too long" wrapper) are not
 * messages a server logs for a death. test/death-messages.test.ts checks that the generated file is up to date.
 */

/** The oldest release whose templates are collected. */
export const OLDEST_RELEASE = "1.12";

/** Where the generated module goes. */
export const GENERATED_PATH = fileURLToPath(new URL("../src/death-templates.generated.ts", import.meta.url));

interface VersionInfo {
  minecraftVersion: string;
  releaseType?: string;
}

interface MinecraftDataModule {
  versionsByMinecraftVersion: { pc: Record<string, VersionInfo | undefined> };
}

type DataPaths = { pc: Record<string, Record<string, string | undefined> | undefined> };

export interface DeathTemplates {
  /** Sorted, de-duplicated, normalised templates that begin with `%1$s `. */
  templates: string[];
  /** The releases whose language files were read, oldest first. */
  versions: string[];
  /** The minecraft-data package version. */
  packageVersion: string;
  /** Normalised `death.*` templates that were left out because they do not begin with `%1$s `, with their keys. */
  skipped: { template: string; keys: string[] }[];
}

/** `%s` becomes `%1$s`, `%2$s`, ... in order of appearance; explicit `%n$s` stay as they are. */
export function normaliseTemplate(template: string): string {
  let next = 0;
  return template.replace(/%(?:(\d+)\$)?s/g, (_whole, index: string | undefined) => {
    if (index !== undefined) return `%${index}$s`;
    next += 1;
    return `%${next}$s`;
  });
}

/** A release version ("1.12", "1.21.11", "26.1") as numbers, or undefined for snapshots, pre-releases, rcs. */
function releaseParts(version: string): number[] | undefined {
  if (!/^\d+\.\d+(?:\.\d+)?$/.test(version)) return undefined;
  return version.split(".").map(Number);
}

function compareParts(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Reads minecraft-data (as installed for packages/game-log) and collects the death message templates. */
export function buildTemplates(): DeathTemplates {
  const require = createRequire(new URL("../package.json", import.meta.url));
  const packageJsonPath = require.resolve("minecraft-data/package.json");
  const packageVersion = (JSON.parse(readFileSync(packageJsonPath, "utf8")) as { version: string }).version;
  const dataRoot = join(dirname(packageJsonPath), "minecraft-data", "data");
  const mcData = require("minecraft-data") as MinecraftDataModule;
  const dataPaths = require("minecraft-data/minecraft-data/data/dataPaths.json") as DataPaths;

  const oldest = releaseParts(OLDEST_RELEASE) ?? [];
  const releases: { version: string; parts: number[]; language: string }[] = [];
  for (const [version, paths] of Object.entries(dataPaths.pc)) {
    const language = paths?.language;
    const parts = releaseParts(version);
    if (language === undefined || parts === undefined || compareParts(parts, oldest) < 0) continue;
    // Newer entries say what they are; older ones have no releaseType and the version pattern has to do.
    const releaseType = mcData.versionsByMinecraftVersion.pc[version]?.releaseType;
    if (releaseType !== undefined && releaseType !== "release") continue;
    releases.push({ version, parts, language });
  }
  releases.sort((a, b) => compareParts(a.parts, b.parts));
  if (releases.length === 0) throw new Error(`minecraft-data ${packageVersion} has no pc language data`);

  const keysByTemplate = new Map<string, Set<string>>();
  const seenFiles = new Set<string>();
  for (const { language } of releases) {
    // Several releases share one language file (1.12.1 and 1.12.2 use pc/1.12).
    if (seenFiles.has(language)) continue;
    seenFiles.add(language);
    const strings = JSON.parse(readFileSync(join(dataRoot, language, "language.json"), "utf8")) as Record<
      string,
      unknown
    >;
    for (const [key, value] of Object.entries(strings)) {
      if (!key.startsWith("death.") || typeof value !== "string") continue;
      const template = normaliseTemplate(value);
      let keys = keysByTemplate.get(template);
      if (keys === undefined) {
        keys = new Set();
        keysByTemplate.set(template, keys);
      }
      keys.add(key);
    }
  }

  const templates: string[] = [];
  const skipped: DeathTemplates["skipped"] = [];
  for (const [template, keys] of keysByTemplate) {
    if (template.startsWith("%1$s ")) templates.push(template);
    else skipped.push({ template, keys: [...keys].sort() });
  }
  templates.sort();
  skipped.sort((a, b) => (a.template < b.template ? -1 : a.template > b.template ? 1 : 0));
  return { templates, versions: releases.map((r) => r.version), packageVersion, skipped };
}

/** The text of death-templates.generated.ts, formatted the way biome would. */
export function renderTemplates({ templates, versions, packageVersion }: DeathTemplates): string {
  const range = `${versions[0]} to ${versions[versions.length - 1]}`;
  return [
    "// Generated by packages/game-log/scripts/gen-death-messages.ts from minecraft-data " +
      `${packageVersion}, en_us, Java releases ${range}.`,
    "// Do not edit: run `node packages/game-log/scripts/gen-death-messages.ts` from the repository root instead.",
    "",
    "/** Every English death message template, normalised (`%1$s` is the dying player), sorted. */",
    "export const DEATH_TEMPLATES: readonly string[] = [",
    ...templates.map((t) => `  ${JSON.stringify(t)},`),
    "];",
    "",
  ].join("\n");
}

if (import.meta.main) {
  const built = buildTemplates();
  writeFileSync(GENERATED_PATH, renderTemplates(built));
  console.log(
    `wrote ${built.templates.length} templates from ${built.versions.length} releases ` +
      `(${built.versions[0]} to ${built.versions[built.versions.length - 1]}) to ${GENERATED_PATH}`,
  );
  for (const { template, keys } of built.skipped) {
    console.log(`skipped (does not begin with the player): ${JSON.stringify(template)} [${keys.join(", ")}]`);
  }
}
