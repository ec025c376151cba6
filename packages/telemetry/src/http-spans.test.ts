import { describe, expect, it } from "vitest";
import { routeTemplate } from "./http-spans";

describe("routeTemplate", () => {
  it.each([
    ["/mcp/:server", "/mcp/{server}"],
    ["/v1/tools/:name/call", "/v1/tools/{name}/call"],
    [
      "/servers/:id/threads/:thread/callers/:caller/mcp",
      "/servers/{id}/threads/{thread}/callers/{caller}/mcp",
    ],
    ["/v1/items/:id{[0-9]+}", "/v1/items/{id}"],
    ["/mcp/*", "/mcp/*"],
    ["/healthz", "/healthz"],
  ])("%s is %s", (pattern, template) => {
    expect(routeTemplate(pattern)).toBe(template);
  });
});
