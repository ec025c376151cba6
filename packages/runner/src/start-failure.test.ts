import { describe, expect, it } from "vitest";
import { startFailureDetail } from "./start-failure";

const enoent = (command: string) => Object.assign(new Error(`spawn ${command} ENOENT`), { code: "ENOENT" });

describe("why a child did not start", () => {
  it("says a command with spaces was taken as one program's name, and where its arguments go", () => {
    expect(startFailureDetail("npx -y some-server", enoent("npx -y some-server"), "")).toBe(
      "the child did not start: command not found: “npx -y some-server” — it holds spaces, and a command is one program's name (it is not run by a shell): put the program in command and each argument in args",
    );
  });

  it("says a plain command was not found, and that it cannot be run when it is not executable", () => {
    expect(startFailureDetail("nppx", enoent("nppx"), "")).toMatch(
      /command not found: “nppx” — is it installed/,
    );
    const denied = Object.assign(new Error("spawn ./run.sh EACCES"), { code: "EACCES" });
    expect(startFailureDetail("./run.sh", denied, "")).toMatch(/cannot be run: permission denied/);
  });

  it("keeps any other reason as it was, and puts the stderr tail on lines of its own", () => {
    expect(
      startFailureDetail("node", new Error("MCP error -32000: Connection closed"), "  boom\nat line 2\n"),
    ).toBe(
      "the child did not start: MCP error -32000: Connection closed\nstderr (last lines):\nboom\nat line 2",
    );
  });
});
