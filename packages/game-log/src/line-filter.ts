import { deathWordsAfterPlayer } from "./death-messages.ts";
import type { OnlinePlayers } from "./game-log.ts";

/**
 * Which lines of a game log GameLogParser can act on, decided on their bytes before any decoding: log-tailer scan's
 * fast path, which pushes only those lines and counts the others with `skip()`. It must never turn away a line the
 * parser would act on, so every test here is a necessary condition of one of the parser's rules, read off its regexes:
 * when in doubt, a line may matter. It holds only while the parser does not need every line (`needsEveryLine`: an
 * entry collecting stack lines, a login held for its window), and with the players online as of the last line pushed. A line the parser acts on is one with an entry header (HEADER or CONSOLE_HEADER in game-log.ts)
 * whose level is ERROR or FATAL, or INFO from the main thread with a message that ends with ` the game`, begins with
 * `Done (`, `Stopping ` or `Starting `, or begins with a player's name followed by `[` (a Bukkit login), by a word a
 * death message or `lost connection` has there, or by a space when that player is online (the modded-death rule).
 *
 * Bytes and characters: every test is on ASCII bytes, and a UTF-8 decode (invalid bytes included) turns ASCII bytes
 * into the same characters, in the same order, and nothing else into them. Lines with ESC or `§` may change when the
 * parser strips colours: they always matter, as do lines that hold `ERROR` or `FATAL` anywhere (the header's thread
 * is a lazy match: an entry can read as severe further along the line than the first `/`).
 */
export class LineFilter {
  readonly #online: OnlinePlayers;
  /** The names in #online, hashed as the bytes of a line are (hashAscii), as of #online's `changes` in #seen. */
  readonly #onlineHashes = new Set<number>();
  #seen = -1;
  readonly #words: Set<number> | undefined;
  #region: Buffer = Buffer.alloc(0);
  /** The next position of each needle in the region, -1 when there is none. */
  readonly #next: number[] = NEEDLES.map(() => -1);
  /** The smallest of #next, or the region's end when there is none. */
  #nearest = 0;

  /** `online`: the parser's players online (read as it changes). */
  constructor(online: OnlinePlayers) {
    this.#online = online;
    const words = deathWordsAfterPlayer();
    this.#words = words === "any" ? undefined : new Set([...words, "lost"].map((w) => hashAscii(w)));
  }

  /** Starts on the lines of `buffer` up to `end` (a line may only be asked about once, in order). */
  region(buffer: Buffer, end: number): void {
    this.#region = buffer.subarray(0, end);
    for (let i = 0; i < NEEDLES.length; i++) this.#next[i] = this.#region.indexOf(NEEDLES[i] as Buffer);
    this.#settleNearest();
  }

  /**
   * Whether the line `buffer[start, newline)` (the region's, its newline at `newline`) may matter to the parser. Ask
   * about every line in order: a needle in a line not asked about makes the next line asked about matter.
   */
  mayMatter(buffer: Buffer, start: number, newline: number): boolean {
    if (this.#nearest < newline) {
      // A needle is in this line: find each one's next place after it.
      for (let i = 0; i < NEEDLES.length; i++) {
        const at = this.#next[i] as number;
        if (at >= 0 && at < newline) this.#next[i] = this.#region.indexOf(NEEDLES[i] as Buffer, newline + 1);
      }
      this.#settleNearest();
      return true;
    }
    const end = newline > start && buffer[newline - 1] === CR ? newline - 1 : newline;
    const message = messageStart(buffer, start, end);
    return message === ANY_MESSAGE || (message >= 0 && this.#messageMayMatter(buffer, message, end));
  }

  /** Whether a name of that hash may be online (another name may have the same hash: it then may matter too). */
  #onlineHas(hash: number): boolean {
    if (this.#seen !== this.#online.changes) {
      this.#onlineHashes.clear();
      for (const name of this.#online) this.#onlineHashes.add(hashAscii(name));
      this.#seen = this.#online.changes;
    }
    return this.#onlineHashes.has(hash);
  }

  #settleNearest(): void {
    let nearest = this.#region.length;
    for (const at of this.#next) if (at >= 0 && at < nearest) nearest = at;
    this.#nearest = nearest;
  }

  /** An INFO message of the main thread, `buffer[m, end)`. */
  #messageMayMatter(b: Buffer, m: number, end: number): boolean {
    if (m >= end) return false;
    const c = b[m] as number;
    // Chat, /me and /say: never an event.
    if (c === LT || c === LBRACKET || (c === STAR && b[m + 1] === SPACE)) return false;
    if (endsWith(b, end, THE_GAME) || startsWith(b, m, end, DONE) || startsWith(b, m, end, STOPPING)) return true;
    if (startsWith(b, m, end, STARTING)) return true;
    // A player's name: `[.*]?[A-Za-z0-9_]{1,16}`.
    let i = m;
    let name = 0;
    if (c === DOT || c === STAR) {
      name = c;
      i++;
    }
    const first = i;
    for (; i < end && i - first <= 16 && isNameByte(b[i] as number); i++)
      name = (Math.imul(name, 31) + (b[i] as number)) | 0;
    if (i === first || i - first > 16 || i >= end) return false;
    if (b[i] === LBRACKET) return true;
    if (b[i] !== SPACE) return false;
    if (this.#words === undefined || (this.#online.size > 0 && this.#onlineHas(name))) return true;
    let word = 0;
    for (i++; i < end && b[i] !== SPACE; i++) word = (Math.imul(word, 31) + (b[i] as number)) | 0;
    return this.#words.has(word);
  }
}

const NEEDLES = [Buffer.from([0x1b]), Buffer.from("§"), Buffer.from("ERROR"), Buffer.from("FATAL")];
const CR = 13;
const SPACE = 32;
const STAR = 42;
const DOT = 46;
const COLON = 58;
const LT = 60;
const LBRACKET = 91;
const RBRACKET = 93;
const THE_GAME = Buffer.from(" the game");
const DONE = Buffer.from("Done (");
const STOPPING = Buffer.from("Stopping ");
const STARTING = Buffer.from("Starting ");
const MAIN_THREAD_INFO = Buffer.from("Server thread/INFO]");
const REGION_THREAD = Buffer.from("Region Scheduler Thread");
const CONSOLE_INFO = Buffer.from(" INFO");
/** messageStart's answer for a line whose message it does not find, which may matter whatever it says. */
const ANY_MESSAGE = -2;

function hashAscii(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

function isNameByte(c: number): boolean {
  // 0-9, A-Z, _, a-z
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122);
}

function startsWith(b: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (b[at + k] !== prefix[k]) return false;
  return true;
}

function endsWith(b: Buffer, end: number, suffix: Buffer): boolean {
  return startsWith(b, end - suffix.length, end, suffix);
}

/**
 * Where the message of an INFO entry of the main thread would begin in `b[start, end)`: the position after the header's
 * `]: `; -1 when the line cannot be one (no header, another level, another thread), ANY_MESSAGE for a region thread. Both headers end
 * their time at the line's first `]` (nothing before it can be one). HEADER then needs ` [` and the thread, lazily up
 * to a `/LEVEL]` that the rest fits: a thread that is exactly `Server thread` has `Server thread/INFO]` next, followed
 * by `:` or by a logger ` [...]` and `:` (else the match, if any, has a longer thread); Folia's region threads may be
 * longer: they may always matter. CONSOLE_HEADER (thread "") needs ` INFO` before that `]` and `:` after it.
 */
function messageStart(b: Buffer, start: number, end: number): number {
  if (b[start] !== LBRACKET) return -1;
  let p = start + 1;
  while (p < end && b[p] !== RBRACKET) p++;
  if (p + 2 >= end) return -1;
  let m: number;
  if (b[p + 1] === SPACE && b[p + 2] === LBRACKET) {
    let q = p + 3;
    if (!startsWith(b, q, end, MAIN_THREAD_INFO)) return startsWith(b, q, end, REGION_THREAD) ? ANY_MESSAGE : -1;
    q += MAIN_THREAD_INFO.length;
    if (b[q] === SPACE && b[q + 1] === LBRACKET) {
      q += 2;
      while (q < end && b[q] !== RBRACKET) q++;
      q++;
    }
    if (q >= end || b[q] !== COLON) return -1;
    m = q + 1;
  } else if (b[p + 1] === COLON && p - CONSOLE_INFO.length > start && endsWith(b, p, CONSOLE_INFO)) {
    m = p + 2;
  } else return -1;
  return m < end && b[m] === SPACE ? m + 1 : m;
}
