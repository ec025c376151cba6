/**
 * Text as an admin must read it when judging a tool's description: characters that do not show
 * (zero-width, bidi controls, tag characters, other format and control characters) become visible
 * marks naming their code point, so a hidden instruction cannot pass for ordinary text.
 */

/** A run of plain text, or one character that would not show, named by its code point. */
export type Piece = { text: string; hidden: false } | { text: string; hidden: true; codePoint: string };

/** Format (Cf) and control (Cc) characters other than tab and newline, plus the variation selectors. */
const HIDDEN = /^(?:\p{Cf}|\p{Cc}|[\u{FE00}-\u{FE0F}]|[\u{E0100}-\u{E01EF}])$/u;

/** The pieces of `text`, hidden characters each their own piece (`U+200B`). */
export function visiblePieces(text: string): Piece[] {
  const pieces: Piece[] = [];
  let plain = "";
  for (const char of text) {
    if (char !== "\n" && char !== "\t" && HIDDEN.test(char)) {
      if (plain) pieces.push({ text: plain, hidden: false });
      plain = "";
      const codePoint = `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
      pieces.push({ text: char, hidden: true, codePoint });
    } else {
      plain += char;
    }
  }
  if (plain) pieces.push({ text: plain, hidden: false });
  return pieces;
}

/** A diff value as text: a string as it is, anything else as indented JSON, nothing as "(none)". */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return "(none)";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}
