import { describe, expect, it } from "vitest";
import { maskedSecrets, secretMapOf, secretValues } from "./secret-map";
import { ServerSpec } from "./server";

describe("secret maps", () => {
  it("are the headers of an HTTP server, Authorization masked to its scheme", () => {
    // Prepare
    const spec = ServerSpec.parse({
      name: "remote",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer abc", "X-Key": "k" },
    });

    // Act / Assess
    expect(secretMapOf(spec.transport)).toMatchObject({ field: "headers", noun: "header" });
    expect(secretValues(spec)).toEqual({ Authorization: "Bearer abc", "X-Key": "k" });
    expect(maskedSecrets(spec)).toEqual({ Authorization: "Bearer [SECRET]", "X-Key": "[SECRET]" });
  });

  it("are the env of a stdio server, every value masked", () => {
    // Prepare
    const spec = ServerSpec.parse({ name: "local", command: "node", env: { TOKEN: "t" } });

    // Act / Assess
    expect(secretMapOf(spec.transport)).toMatchObject({ field: "env", noun: "env" });
    expect(secretValues(spec)).toEqual({ TOKEN: "t" });
    expect(maskedSecrets(spec)).toEqual({ TOKEN: "[SECRET]" });
  });
});
