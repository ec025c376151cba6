import { describe, expect, it } from "vitest";
import { errorSentence, reasonLabel } from "./components";

describe("a status in words", () => {
  it("names what 'failed' alone does not, from the last error, and leaves it out when nothing more is known", () => {
    expect(reasonLabel("failed", "the child did not start: command not found: “npx -y x” — …")).toBe(
      "command not found",
    );
    expect(reasonLabel("failed", "process exited unexpectedly (code 3)\nstderr (last lines):\nboom")).toBe(
      "the process exited",
    );
    expect(reasonLabel("failed", "something else")).toBeUndefined();
    expect(reasonLabel("not_responding", null)).toBe("not responding");
    expect(reasonLabel(null, "x")).toBeUndefined();
  });

  it("keeps a table's cell to the sentence, without the stderr lines", () => {
    expect(errorSentence("process exited unexpectedly (code 3)\nstderr (last lines):\nboom")).toBe(
      "process exited unexpectedly (code 3)",
    );
    expect(errorSentence("refused")).toBe("refused");
  });
});
