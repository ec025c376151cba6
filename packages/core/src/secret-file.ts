import type { SecretFormat } from "./server";

/** Renders a flat secret map in `format`, keys sorted, ending with a newline. */
export function renderSecretFile(values: Record<string, string>, format: SecretFormat): string {
  const entries = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  switch (format) {
    case "env":
      return lines(entries.map(([key, value]) => `${key}=${envValue(value)}`));
    case "properties":
      return lines(
        entries.map(([key, value]) => `${propertiesText(key, true)}=${propertiesText(value, false)}`),
      );
    case "json":
      return `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`;
    case "yaml":
      // JSON strings are valid YAML double-quoted scalars: every value is quoted, nothing is coerced.
      // An empty map is written `{}` (an empty YAML document would load as null, not a mapping).
      if (entries.length === 0) return "{}\n";
      return lines(entries.map(([key, value]) => `${yamlString(key)}: ${yamlString(value)}`));
  }
}

function lines(items: string[]): string {
  return items.map((line) => `${line}\n`).join("");
}

/**
 * A JSON string that is also a safe YAML double-quoted scalar: JSON leaves DEL, C1 controls, NEL,
 * U+2028/U+2029 (line breaks to YAML 1.1), BOM and U+FFFE/U+FFFF raw, which YAML parsers reject or fold.
 */
function yamlString(text: string): string {
  return JSON.stringify(text).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** dotenv: plain when safe, otherwise double-quoted with escapes. */
function envValue(value: string): string {
  if (/^[A-Za-z0-9_./:@%+,=-]*$/.test(value)) return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\$/g, "\\$").replace(/`/g, "\\`")}"`;
}

/** java.util.Properties escaping (keys also escape spaces; non-ASCII as \uXXXX). */
function propertiesText(text: string, isKey: boolean): string {
  let out = "";
  for (const [index, char] of [...text].entries()) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\\") out += "\\\\";
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char === "=" || char === ":" || char === "#" || char === "!") out += `\\${char}`;
    else if (char === " " && (isKey || index === 0)) out += "\\ ";
    else if (code > 0x7e || code < 0x20) out += utf16Escapes(char);
    else out += char;
  }
  return out;
}

function utf16Escapes(char: string): string {
  let out = "";
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}
