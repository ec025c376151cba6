import MiniSearch from "minisearch";
import { describe, expect, it } from "vitest";
import {
  MAX_INDEX_CHARS,
  MAX_QUERY_CHARS,
  normalizeTerm,
  shortDescription,
  splitWords,
  stem,
  ToolIndex,
} from "./tool-search";

/** A tool with these parameters (name → JSON Schema). */
const tool = (name: string, description: string, properties: Record<string, unknown>, title?: string) => ({
  name,
  description,
  inputSchema: { type: "object", properties },
  ...(title ? { title } : {}),
});

const TOOLS = [
  tool("fs__read_text_file", "Read the complete contents of a file from the file system as text.", {
    path: { type: "string" },
  }),
  tool("fs__list_directory", "Get a detailed listing of all files and directories in a specified path.", {
    path: { type: "string" },
  }),
  tool("ev__get-sum", "Returns the sum of two numbers", { a: { type: "number" }, b: { type: "number" } }),
  tool(
    "crm__createInvoice",
    "Bill a customer.",
    { customerId: { type: "string", description: "The customer to bill" } },
    "Create invoice",
  ),
];

describe("splitWords", () => {
  it("splits qualified names on __, _, -, and camelCase humps", () => {
    expect(splitWords("crm__createInvoice")).toEqual(["crm", "create", "Invoice"]);
    expect(splitWords("ev__get-sum")).toEqual(["ev", "get", "sum"]);
    expect(splitWords("fs__read_text_file")).toEqual(["fs", "read", "text", "file"]);
    expect(splitWords("parseHTMLPage now")).toEqual(["parse", "HTML", "Page", "now"]);
  });
});

describe("stem", () => {
  it("folds plural and verb forms together", () => {
    expect(stem("directories")).toBe(stem("directory"));
    expect(stem("files")).toBe(stem("file"));
    expect(stem("reading")).toBe("read");
    expect(["create", "creates", "creating", "created"].map(stem)).toEqual([
      "creat",
      "creat",
      "creat",
      "creat",
    ]);
    expect(stem("running")).toBe("run");
    expect(stem("searches")).toBe("search");
    expect(stem("status")).toBe("status");
    expect(stem("add")).toBe("add");
  });

  it("drops stop words and single letters", () => {
    expect(normalizeTerm("The")).toBeNull();
    expect(normalizeTerm("a")).toBeNull();
    expect(normalizeTerm("Files")).toBe("fil");
  });
});

describe("ToolIndex", () => {
  const index = new ToolIndex(TOOLS, MiniSearch);

  it("ranks by name, description and parameters", () => {
    expect(index.search("read a file's contents", 5)[0]?.name).toBe("fs__read_text_file");
    expect(index.search("list the files in a directory", 5)[0]?.name).toBe("fs__list_directory");
    expect(index.search("sum two numbers", 5)[0]?.name).toBe("ev__get-sum");
    expect(index.search("creating invoices", 5)[0]?.name).toBe("crm__createInvoice");
    expect(index.search("which customer", 5)[0]?.name).toBe("crm__createInvoice");
  });

  it("returns at most `limit` hits, best first, and none for a query of no words", () => {
    const hits = index.search("file directory path", 1);
    expect(hits).toHaveLength(1);
    expect(index.search("the of a", 5)).toEqual([]);
    expect(index.search("", 5)).toEqual([]);
  });

  it("reads only the first MAX_QUERY_CHARS of a query", () => {
    const padded = `${"zzz ".repeat(MAX_QUERY_CHARS / 4)} invoice`;
    expect(index.search(padded, 5)).toEqual([]);
  });
});

describe("shortDescription", () => {
  it("is the first sentence, at most 200 characters", () => {
    expect(shortDescription("Reads a file. Use with care.")).toBe("Reads a file.");
    expect(shortDescription("Version 1.2 of the\n tool")).toBe("Version 1.2 of the tool");
    expect(shortDescription(undefined)).toBe("");
    const long = shortDescription("x".repeat(500));
    expect(long.length).toBe(200);
    expect(long.endsWith("…")).toBe(true);
  });

  it("holds a bounded text however long a hostile catalogue's descriptions, and still finds by them", () => {
    const words = (seed: number) => Array.from({ length: 700 }, (_, i) => `w${seed}x${i}`).join(" ");
    const hostile = Array.from({ length: 2_000 }, (_, i) => ({
      name: `h__t${i}`,
      description: words(i),
      inputSchema: { type: "object" },
    }));
    const index = new ToolIndex(hostile, MiniSearch);
    // 2,000 descriptions of ~4,000 characters each (8 MB) are read to each tool's share of the bound.
    expect(index.chars).toBeLessThanOrEqual(MAX_INDEX_CHARS * 1.05);
    expect(index.search("w7x3", 1)[0]?.name).toBe("h__t7");
  });
});
