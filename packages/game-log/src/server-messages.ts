import { SERVER_TEMPLATES } from "./server-templates.generated.ts";

/**
 * The server's own messages (command feedback such as `Automatic saving is now disabled` or `Saved the game`,
 * broadcasts, disconnect reasons), as the game's en_us language files have them: SERVER_TEMPLATES, from minecraft-data.
 * The modded-death rule (a message that begins with an online player's name) must never take one of them for a death:
 * a player named `Automatic` would otherwise die at every backup.
 *
 * A template's arguments (`%1$s`) stand for any non-empty text. Matching is done without regular expressions: the
 * literal parts are found in order, each as far left as it can be (which leaves the most room for the rest, so a
 * message that matches is never missed), at a cost linear in the message for each template tried; templates are
 * grouped by their first word (or, for those that begin with an argument, their second), so a message is tried only
 * against the few that begin like it. Nothing a player writes can make it backtrack.
 */

/** A template as its literal parts: the text before the first argument, between arguments, and after the last. */
type Parts = readonly string[];

const ARGUMENT = /%\d+\$s/;

export type ServerMessageMatcher = (message: string) => boolean;

/** Whether `message` is `parts` with each argument any non-empty text. */
function matchesParts(message: string, parts: Parts): boolean {
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (!message.startsWith(first)) return false;
  if (parts.length === 1) return message.length === first.length;
  const end = message.length - last.length;
  if (end < first.length + parts.length - 1 || !message.endsWith(last)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    // At least one character of argument before it, and room for the rest's arguments after it.
    const found = message.indexOf(part, at + 1);
    if (found < 0 || found + part.length > end - (parts.length - 1 - i)) return false;
    at = found + part.length;
  }
  return at < end;
}

function add(map: Map<string, Parts[]>, key: string, parts: Parts): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [parts]);
  else list.push(parts);
}

function anyMatch(message: string, list: Parts[] | undefined): boolean {
  if (list === undefined) return false;
  for (const parts of list) if (matchesParts(message, parts)) return true;
  return false;
}

/** Compiles templates (normalised, `%1$s` for arguments) into a matcher of whole messages. */
export function createServerMessageMatcher(templates: readonly string[]): ServerMessageMatcher {
  // Templates that begin with a word, by that word; those that begin with an argument, by the word after it.
  const byFirst = new Map<string, Parts[]>();
  const bySecond = new Map<string, Parts[]>();
  const rest: Parts[] = [];
  for (const template of new Set(templates)) {
    const parts = template.split(ARGUMENT);
    const head = parts[0] as string;
    const space = head.indexOf(" ");
    if (space > 0) {
      add(byFirst, head.slice(0, space), parts);
    } else if (head === "" && parts.length > 1) {
      const after = parts[1] as string;
      const word = after.startsWith(" ") ? after.slice(1).split(" ")[0] : undefined;
      // `%1$s has ...`: keyed by "has"; `%1$s x%2$s`-like ones, whose second word holds an argument, are always tried.
      if (word && (after.length > word.length + 1 || parts.length === 2)) add(bySecond, word, parts);
      else rest.push(parts);
    } else {
      rest.push(parts);
    }
  }
  return (message) => {
    const space = message.indexOf(" ");
    if (space > 0) {
      if (anyMatch(message, byFirst.get(message.slice(0, space)))) return true;
      let next = message.indexOf(" ", space + 1);
      if (next < 0) next = message.length;
      if (anyMatch(message, bySecond.get(message.slice(space + 1, next)))) return true;
    }
    return anyMatch(message, rest);
  };
}

let matcher: ServerMessageMatcher | undefined;

/**
 * Whether a log message (the text after the prefix) is one of the server's own messages, SERVER_TEMPLATES with any
 * non-empty text for the arguments. The matcher is built on the first call, not when the module loads.
 */
export function isServerMessage(message: string): boolean {
  matcher ??= createServerMessageMatcher(SERVER_TEMPLATES);
  return matcher(message);
}
