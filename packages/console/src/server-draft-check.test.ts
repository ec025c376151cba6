import { describe, expect, it } from "vitest";
import { draftProblems, splitCommandLine } from "./server-draft-check";

const http = (changes: Partial<Parameters<typeof draftProblems>[0]>) =>
  draftProblems({ transport: "http", timeoutSeconds: "30", headers: [], env: [], ...changes });

describe("a server form's checks before it is sent", () => {
  it("passes a good draft, masked values included", () => {
    expect(
      http({
        headers: [
          { key: "Authorization", value: "Bearer [SECRET]" },
          { key: "X-Team", value: "café" },
        ],
      }),
    ).toEqual({});
  });

  it("says what the API would refuse of each header, in words", () => {
    expect(
      http({
        headers: [
          { key: "", value: "orphan" },
          { key: "Host", value: "evil" },
          { key: "X-Price", value: "5 €" },
          { key: "Bad Name", value: "v" },
          { key: "x-price", value: "again" },
          { key: "", value: "" },
        ],
      }).headers,
    ).toEqual([
      "Header row 1 has a value but no name: name it, or remove the row.",
      "Header “Host”: the name is one the gateway or the connection sets itself: it cannot be configured.",
      expect.stringMatching(
        /^Header “X-Price”: the value must hold only characters an HTTP header can carry/,
      ),
      expect.stringMatching(/^Header “Bad Name”: the name must be a valid HTTP header name/),
      "Header “x-price” is given twice: keep one row.",
    ]);
  });

  it("checks the timeout's range, 1e400 and fractions included", () => {
    for (const [text, said] of [
      ["", /Enter a timeout/],
      ["1e400", /is not a number of seconds/],
      ["2.5", /whole number/],
      ["0", /from 1 to 900/],
      ["901", /from 1 to 900/],
    ] as const)
      expect(http({ timeoutSeconds: text }).timeoutSeconds).toEqual([expect.stringMatching(said)]);
    expect(http({ timeoutSeconds: "900" })).toEqual({});
  });

  it("checks environment names of a stdio draft", () => {
    expect(
      draftProblems({
        transport: "stdio",
        timeoutSeconds: "30",
        headers: [],
        env: [
          { key: "1BAD", value: "x" },
          { key: "OK", value: "1" },
          { key: "OK", value: "2" },
        ],
      }).env,
    ).toEqual([
      "“1BAD” is not an environment variable name: letters, digits and _, not starting with a digit.",
      "Variable “OK” is given twice: keep one row.",
    ]);
  });

  it("splits a command line typed whole into Command, quotes kept together", () => {
    expect(splitCommandLine("npx -y @modelcontextprotocol/server-everything")).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
    });
    expect(splitCommandLine(`python3 "my server.py" --port 1`)).toEqual({
      command: "python3",
      args: ["my server.py", "--port", "1"],
    });
    expect(splitCommandLine("npx")).toBeUndefined();
    expect(splitCommandLine(`"/Applications/My App/run"`)).toBeUndefined();
  });
});
