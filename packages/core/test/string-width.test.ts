import realStringWidth from "string-width";
import { describe, expect, it } from "vitest";
import stringWidth from "../src/string-width.ts";

describe("string-width stand-in", () => {
  it.each([
    "",
    "plain ASCII help text",
    "\u001b[31mred\u001b[39m text",
    "\u009b1mbold\u009b22m by the one-byte CSI",
    "naïve café",
    "日本語のテキスト",
    "한국어",
    "emoji 🎉 and ❤️ here",
    "flag 🇩🇪",
    "family 👨‍👩‍👧",
    "combining e\u0301",
    "zero\u200bwidth",
    "tab\tand\u0007bell",
    "— dash and → arrow",
  ])("measures %j as string-width does", (text) => {
    expect(stringWidth(text)).toBe(realStringWidth(text));
  });

  it("honours ambiguousIsNarrow and countAnsiEscapeCodes", () => {
    expect(stringWidth("±×", { ambiguousIsNarrow: false })).toBe(realStringWidth("±×", { ambiguousIsNarrow: false }));
    expect(stringWidth("\u001b[1mx", { countAnsiEscapeCodes: true })).toBe(
      realStringWidth("\u001b[1mx", { countAnsiEscapeCodes: true }),
    );
  });
});
