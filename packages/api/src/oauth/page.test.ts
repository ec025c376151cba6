import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { errorPage, messagePage, sendPage } from "./page";

/** The headers of a page answered by {@link sendPage}, by name. */
async function headersOf(redirectOrigin?: string): Promise<Record<string, string>> {
  const app = new Hono();
  app.get("/", (c) => sendPage(c, 400, errorPage("no"), redirectOrigin));
  const response = await app.request("/");
  expect(response.status).toBe(400);
  return Object.fromEntries(response.headers);
}

describe("the authorization pages' headers", () => {
  it("are exactly the strict set, with no other secure-headers default (no HSTS, COOP, CORP…)", async () => {
    expect(await headersOf()).toEqual({
      "content-type": "text/html; charset=utf-8",
      "content-security-policy":
        "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
    });
  });

  it("let the consent form's answer redirect to the client's origin, and nowhere else", async () => {
    const headers = await headersOf("https://client.example");

    expect(headers["content-security-policy"]).toBe(
      "default-src 'none'; form-action 'self' https://client.example; frame-ancestors 'none'; base-uri 'none'",
    );
  });
});

describe("messagePage", () => {
  it("escapes the five characters that matter in content and quoted attributes", () => {
    expect(messagePage("t", `<a href="x">'&'</a>`)).toContain(
      "<p>&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;</p>",
    );
  });
});
