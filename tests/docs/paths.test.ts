/**
 * Citations resolve: a repository path cited in a source comment (packages, scripts, infra, tests) or in
 * the docs (README.md, docs/*.md) exists, a top-level doc named in a comment (`README.md`) exists, and
 * every relative markdown link between the docs reaches its file and, with `#anchor`, its heading.
 * Paths are matched only from the repository's top folders (`packages/…`, `scripts/…`, `docs/…`), so
 * a package name, a URL or an example path in a string is not taken for one; globs and templates
 * (`packages/*`, `docs/console/<page>`) and build outputs git ignores (`dist/`) are not checked.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });

/** A repository path: from a top folder, up to the first character a path here never holds. */
const REPO_PATH = /(?<![\w@./~-])((?:packages|scripts|infra|tests|docs|\.ci)\/[\w.\-/]*)([*<{$[]?)/g;
/** A top-level doc by name alone (`README.md`): it must be at the root or under docs/. */
const DOC_NAME = /(?<![\w./-])([A-Z][A-Z_-]*\.md)\b/g;

function ignoredByGit(path: string): boolean {
  try {
    git("check-ignore", "-q", path);
    return true;
  } catch {
    return false;
  }
}

/** The repository paths cited in `text` that do not exist. */
function missingPaths(text: string): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(REPO_PATH)) {
    const [, raw = "", glob] = match;
    if (glob) continue; // a glob or a template: packages/*/src, docs/console/<page>
    const path = raw.replace(/[.]+$/, "");
    if (!existsSync(join(ROOT, path)) && !ignoredByGit(path)) missing.push(path);
  }
  for (const match of text.matchAll(DOC_NAME)) {
    const name = match[1] ?? "";
    if (!existsSync(join(ROOT, name)) && !existsSync(join(ROOT, "docs", name))) missing.push(name);
  }
  return missing;
}

/** The comments of a source file: `//` and `/* *\/` in TypeScript and JavaScript, `#` elsewhere. */
function comments(file: string, text: string): string[] {
  if (/\.(ts|tsx|mts|mjs|js)$/.test(file)) {
    return [...text.matchAll(/(?:^|[\s;{}(),])(\/\/[^\n]*)|(?:^|\s)(\/\*[\s\S]*?\*\/)/g)].map(
      (match) => match[1] ?? match[2] ?? "",
    );
  }
  if (/(\.(py|sh|ya?ml|toml)|Dockerfile|\/run)$/.test(file)) {
    return [...text.matchAll(/(?:^|\s)(#[^\n]*)/g)].map((match) => match[1] ?? "");
  }
  return [];
}

const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1] ?? "")));
}

describe("citations resolve", () => {
  it("a path cited in a source comment exists", () => {
    const files = git("ls-files", "packages", "scripts", "infra", "tests", "sst.config.ts", ".ci").split(
      "\n",
    );
    const missing = files
      .filter(Boolean)
      .flatMap((file) =>
        comments(file, readFileSync(join(ROOT, file), "utf8")).flatMap((comment) =>
          missingPaths(comment).map((path) => `${file}: ${path}`),
        ),
      );
    expect(missing).toEqual([]);
  });

  it("a path cited in the docs exists", () => {
    const missing = DOCS.flatMap((file) =>
      missingPaths(readFileSync(join(ROOT, file), "utf8")).map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it("every relative link between the docs reaches its file and heading", () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      const text = readFileSync(join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
      const targets = [
        ...[...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? ""),
        ...[...text.matchAll(/<img src="([^"]+)"/g)].map((match) => match[1] ?? ""),
      ];
      for (const target of targets) {
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const [path = "", anchor] = target.split("#");
        const resolved = path ? relative(ROOT, resolve(dirname(join(ROOT, file)), path)) : file;
        if (!existsSync(join(ROOT, resolved))) broken.push(`${file}: ${target} (no ${resolved})`);
        else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
