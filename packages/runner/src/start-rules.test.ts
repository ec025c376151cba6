import { describe, expect, it } from "vitest";
import { mayDownloadAtStart } from "./start-rules";

describe("mayDownloadAtStart", () => {
  it("is true for package runners, by name or by path", () => {
    expect(mayDownloadAtStart("npx")).toBe(true);
    expect(mayDownloadAtStart("/usr/local/bin/uvx")).toBe(true);
    expect(mayDownloadAtStart("pnpm")).toBe(true);
  });

  it("is false for anything else: node, python, a server binary", () => {
    expect(mayDownloadAtStart(process.execPath)).toBe(false);
    expect(mayDownloadAtStart("python3")).toBe(false);
    expect(mayDownloadAtStart("/opt/mcp/server")).toBe(false);
  });
});
