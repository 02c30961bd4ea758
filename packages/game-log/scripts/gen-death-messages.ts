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

/** The en_us language files of the Java releases from OLDEST_RELEASE on, as minecraft-data (installed for
 * packages/game-log) ships them, each read once (several releases share one file: 1.12.1 and 1.12.2 use pc/1.12). */
function readLanguages(): { strings: Record<string, unknown>[]; versions: string[]; packageVersion: string } {
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

  const strings: Record<string, unknown>[] = [];
  const seenFiles = new Set<string>();
  for (const { language } of releases) {
    if (seenFiles.has(language)) continue;
    seenFiles.add(language);
    strings.push(
      JSON.parse(readFileSync(join(dataRoot, language, "language.json"), "utf8")) as Record<string, unknown>,
    );
  }
  return { strings, versions: releases.map((r) => r.version), packageVersion };
}

/** Reads minecraft-data (as installed for packages/game-log) and collects the death message templates. */
export function buildTemplates(): DeathTemplates {
  const { strings: files, versions, packageVersion } = readLanguages();
  const keysByTemplate = new Map<string, Set<string>>();
  for (const strings of files) {
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
  return { templates, versions, packageVersion, skipped };
}

/** The first lines of a generated file: where it comes from, and not to edit it. */
function generatedHeader(packageVersion: string, versions: readonly string[]): string[] {
  const range = `${versions[0]} to ${versions[versions.length - 1]}`;
  return [
    "// Generated by packages/game-log/scripts/gen-death-messages.ts from minecraft-data " +
      `${packageVersion}, en_us, Java releases ${range}.`,
    "// Do not edit: run `node packages/game-log/scripts/gen-death-messages.ts` from the repository root instead.",
    "",
  ];
}

/** The text of death-templates.generated.ts, formatted the way biome would. */
export function renderTemplates({ templates, versions, packageVersion }: DeathTemplates): string {
  return [
    ...generatedHeader(packageVersion, versions),
    "/** Every English death message template, normalised (`%1$s` is the dying player), sorted. */",
    "export const DEATH_TEMPLATES: readonly string[] = [",
    ...templates.map((t) => `  ${JSON.stringify(t)},`),
    "];",
    "",
  ].join("\n");
}

/** Where the server's own messages go. */
export const SERVER_GENERATED_PATH = fileURLToPath(new URL("../src/server-templates.generated.ts", import.meta.url));

/**
 * The language keys of what a server writes to its log itself: command feedback and errors (the console's commands,
 * the backup's `save-off`, `save-all` and `save-on`), broadcasts (joins, advancements) and disconnect reasons.
 * Client-only strings (menus, item names, subtitles) never reach the log.
 */
export const SERVER_KEY_PREFIXES: readonly string[] = [
  "argument",
  "arguments",
  "chat",
  "clear",
  "command",
  "commands",
  "disconnect",
  "gameMode",
  "item_modifier",
  "mirror",
  "multiplayer",
  "parsing",
  "permissions",
  "predicate",
  "slot",
  "snbt",
  "team",
  "test",
  "test_instance",
];

const LEADING_PLACEHOLDER = /^%\d+\$s /;
const LEADING_WORD = /^[A-Za-z0-9_]{1,16} /;

/**
 * Whether a normalised server template can be taken for a modded death (a message that begins with a player's name
 * and a space): it begins with a word that could be a name (`Automatic saving is now disabled`), or with an argument
 * and a word (`%1$s has %2$s experience points`). A template that begins with an argument needs two words of its own:
 * `%1$s has %2$s %3$s` (a score) or `%1$s ms` would match nearly any message and hide real deaths.
 */
export function isServerTemplate(template: string): boolean {
  if (LEADING_WORD.test(template)) return true;
  if (!LEADING_PLACEHOLDER.test(template) || !/^%\d+\$s [A-Za-z]/.test(template)) return false;
  return (
    template
      .replace(/%\d+\$s/g, " ")
      .trim()
      .split(/\s+/).length >= 2
  );
}

/** The templates of the server's own messages that could be taken for a player's modded death, sorted. */
export function buildServerTemplates(): { templates: string[]; versions: string[]; packageVersion: string } {
  const { strings: files, versions, packageVersion } = readLanguages();
  const prefixes = new Set(SERVER_KEY_PREFIXES);
  const found = new Set<string>();
  for (const strings of files) {
    for (const [key, value] of Object.entries(strings)) {
      if (typeof value !== "string" || !prefixes.has(key.slice(0, key.indexOf(".")))) continue;
      const template = normaliseTemplate(value);
      if (isServerTemplate(template)) found.add(template);
    }
  }
  return { templates: [...found].sort(), versions, packageVersion };
}

/** The text of server-templates.generated.ts, formatted the way biome would. */
export function renderServerTemplates({
  templates,
  versions,
  packageVersion,
}: ReturnType<typeof buildServerTemplates>): string {
  return [
    ...generatedHeader(packageVersion, versions),
    "/** The server's own messages (command feedback, broadcasts) that begin with a word or a player, normalised, sorted. */",
    "export const SERVER_TEMPLATES: readonly string[] = [",
    ...templates.map((t) => `  ${biomeString(t)},`),
    "];",
    "",
  ].join("\n");
}

/** A string literal as biome writes it: double quotes, unless the text holds double quotes and no single ones. */
function biomeString(text: string): string {
  const json = JSON.stringify(text);
  if (!text.includes('"') || text.includes("'")) return json;
  return `'${json.slice(1, -1).replaceAll('\\"', '"')}'`;
}

if (import.meta.main) {
  const built = buildTemplates();
  writeFileSync(GENERATED_PATH, renderTemplates(built));
  const server = buildServerTemplates();
  writeFileSync(SERVER_GENERATED_PATH, renderServerTemplates(server));
  console.log(`wrote ${server.templates.length} server message templates to ${SERVER_GENERATED_PATH}`);
  console.log(
    `wrote ${built.templates.length} templates from ${built.versions.length} releases ` +
      `(${built.versions[0]} to ${built.versions[built.versions.length - 1]}) to ${GENERATED_PATH}`,
  );
  for (const { template, keys } of built.skipped) {
    console.log(`skipped (does not begin with the player): ${JSON.stringify(template)} [${keys.join(", ")}]`);
  }
}
