import { DEATH_TEMPLATES } from "./death-templates.generated.ts";

/** A player death recognised in a server log message. */
export interface DeathMatch {
  /** The dying player's name as logged, Bedrock prefix (`.` or `*`) included. */
  player: string;
  /** The normalised template that matched, one of DEATH_TEMPLATES (e.g. `%1$s was slain by %2$s`). */
  template: string;
}

const PLAYER = "%1$s ";
const PLACEHOLDER = /%\d+\$s/g;
/** A Bedrock prefix (Floodgate's `.` or a `*`) and up to 16 name characters. */
const MAX_PLAYER_LENGTH = 17;

interface Bucket {
  /** Sticky: `(?:alt1()|alt2()|...)$`, run from just after the player name and its space. */
  regex: RegExp;
  /** templates[i] belongs to capture group i + 1, the empty marker at the end of its alternative. */
  templates: string[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The regex source of a template after its leading `%1$s `: literals escaped, arguments any non-empty text. */
function alternative(rest: string): string {
  const literals = rest.split(PLACEHOLDER);
  let source = escapeRegExp(literals[0] ?? "");
  for (let i = 1; i < literals.length; i++) {
    const literal = literals[i] ?? "";
    // Anchored at the end either way; greedy is just cheaper than lazy when nothing follows.
    source += (i === literals.length - 1 && literal === "" ? ".+" : ".+?") + escapeRegExp(literal);
  }
  return `${source}()`;
}

/** More literal text first, so `%2$s using magic` wins over `%2$s using %3$s` and both over `%2$s`. */
function bySpecificity(a: string, b: string): number {
  const d = b.replace(PLACEHOLDER, "").length - a.replace(PLACEHOLDER, "").length;
  return d !== 0 ? d : a < b ? -1 : a > b ? 1 : 0;
}

function bucket(templates: string[]): Bucket {
  const sorted = [...templates].sort(bySpecificity);
  const source = sorted.map((t) => alternative(t.slice(PLAYER.length))).join("|");
  return { regex: new RegExp(`(?:${source})$`, "y"), templates: sorted };
}

function isPlayerName(message: string, end: number): boolean {
  let i = 0;
  const first = message.charCodeAt(0);
  if (first === 46 /* . */ || first === 42 /* * */) i = 1;
  if (end - i < 1 || end - i > 16) return false;
  for (; i < end; i++) {
    const c = message.charCodeAt(i);
    // 0-9, A-Z, _, a-z
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122))) return false;
  }
  return true;
}

/** Templates grouped by the word after the player's name; those with an argument there apart. */
function byWordAfterPlayer(templates: readonly string[]): { byWord: Map<string, string[]>; anyWord: string[] } {
  const byWord = new Map<string, string[]>();
  // Templates whose second word holds an argument (none so far) could follow any word.
  const anyWord: string[] = [];
  for (const template of new Set(templates)) {
    if (!template.startsWith(PLAYER)) throw new Error(`death template does not begin with "%1$s ": ${template}`);
    const rest = template.slice(PLAYER.length);
    const space = rest.indexOf(" ");
    const word = space === -1 ? rest : rest.slice(0, space);
    if (word.includes("%")) {
      anyWord.push(template);
      continue;
    }
    const list = byWord.get(word);
    if (list === undefined) byWord.set(word, [template]);
    else list.push(template);
  }
  return { byWord, anyWord };
}

/**
 * The words that can follow the player's name in a death message (`was`, `drowned`, `fell`, ...): a message whose
 * second word is none of them is no death (matchDeath turns it away after one lookup). `any` when a template has an
 * argument there, and then any word can.
 */
export function deathWordsAfterPlayer(templates: readonly string[] = DEATH_TEMPLATES): string[] | "any" {
  const { byWord, anyWord } = byWordAfterPlayer(templates);
  return anyWord.length > 0 ? "any" : [...byWord.keys()];
}

/**
 * Compiles death message templates (`%1$s` first, then a space) into a matcher. Templates are grouped by the word
 * after the player name; a message whose second word starts no template is turned away after one Map lookup, the rest
 * are tried against one combined, anchored regex for that word.
 */
export function createDeathMatcher(templates: readonly string[]): (message: string) => DeathMatch | undefined {
  const { byWord, anyWord } = byWordAfterPlayer(templates);
  const buckets = new Map<string, Bucket>();
  for (const [word, list] of byWord) buckets.set(word, bucket([...list, ...anyWord]));
  const fallback = anyWord.length > 0 ? bucket(anyWord) : undefined;

  return (message) => {
    const space = message.indexOf(" ");
    if (space < 1 || space > MAX_PLAYER_LENGTH) return undefined;
    let wordEnd = message.indexOf(" ", space + 1);
    if (wordEnd === -1) wordEnd = message.length;
    const found = buckets.get(message.slice(space + 1, wordEnd)) ?? fallback;
    if (found === undefined || !isPlayerName(message, space)) return undefined;
    found.regex.lastIndex = space + 1;
    const match = found.regex.exec(message);
    if (match === null) return undefined;
    for (let i = 1; i < match.length; i++) {
      if (match[i] !== undefined) {
        const template = found.templates[i - 1];
        return template === undefined ? undefined : { player: message.slice(0, space), template };
      }
    }
    return undefined;
  };
}

/**
 * Recognises a player death in a server log message, the text after `[HH:MM:SS] [Server thread/INFO]: `, e.g.
 * `Steve was slain by Zombie` or `.BedrockGuy drowned`. The whole message must be one of DEATH_TEMPLATES with a player
 * name (`[.*]?[A-Za-z0-9_]{1,16}`) first and any non-empty text for the other arguments; returns the player and the
 * template, or undefined for anything else (chat, joins, named-entity deaths, ...).
 */
export function matchDeath(message: string): DeathMatch | undefined {
  return matcher(message);
}

const matcher = createDeathMatcher(DEATH_TEMPLATES);
