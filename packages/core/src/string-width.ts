import { stripVTControlCharacters } from "node:util";
import { eastAsianWidth } from "get-east-asian-width";

/**
 * Drop-in for the `string-width` package inside the bundled executables (tsup.shared.ts aliases it here). yargs lays
 * out its help through cliui and wrap-ansi, which bring three copies of string-width; each builds an ICU segmenter and
 * several Unicode-set regexes when imported, about 25 ms of a 75 ms `--help`. This one answers printable ASCII by its
 * length and builds the segmenter only when a string has anything else. Same answers as string-width for what the
 * tools print (string-width.test.ts compares them).
 */
interface StringWidthOptions {
  ambiguousIsNarrow?: boolean;
  countAnsiEscapeCodes?: boolean;
}

let segmenter: Intl.Segmenter | undefined;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC and CSI are what start the escape sequences it must strip
const ESCAPE = /[\x1b\x9b]/;
const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;
const ZERO_WIDTH = /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Mark}\p{Surrogate}]+$/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const REGIONAL_INDICATOR = /^\p{Regional_Indicator}{2}$/u;

export default function stringWidth(input: string, options: StringWidthOptions = {}): number {
  if (typeof input !== "string" || input === "") return 0;
  // Node builds its large escape-sequence pattern on the first strip: only pay for it when there is an escape.
  const plain = options.countAnsiEscapeCodes || !ESCAPE.test(input);
  const text = plain ? input : stripVTControlCharacters(input);
  if (ASCII_PRINTABLE.test(text)) return text.length;
  segmenter ??= new Intl.Segmenter();
  let width = 0;
  for (const { segment } of segmenter.segment(text)) {
    if (ZERO_WIDTH.test(segment)) continue;
    if (PICTOGRAPHIC.test(segment) && (segment.length > 1 || eastAsianWidth(segment.codePointAt(0) ?? 0) === 2)) {
      width += 2;
      continue;
    }
    if (REGIONAL_INDICATOR.test(segment)) {
      width += 2;
      continue;
    }
    const base = [...segment].find((ch) => !ZERO_WIDTH.test(ch)) ?? segment;
    width += eastAsianWidth(base.codePointAt(0) ?? 0, { ambiguousAsWide: options.ambiguousIsNarrow === false });
  }
  return width;
}
