/**
 * The console's sign-in at the OpenID provider, in the browser: the sign-in screen offers "Sign in
 * with <provider>" beside the admin token (break-glass); an admin who follows it lands in the console
 * signed in, with no code or token of the provider anywhere the console keeps or shows things.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcProvider, startOidcProvider } from "../fixtures/oidc-provider";
import { expectAccessible, expectNoSecrets, openConsole } from "../support/browser";
import { type Stack, startStack } from "../support/stack";

describe("console: sign-in at the OpenID provider", () => {
  let op: OidcProvider;
  let stack: Stack;
  beforeAll(async () => {
    op = await startOidcProvider({ accounts: [{ sub: "root-1", name: "Root", groups: ["gw-admins"] }] });
    stack = await startStack({
      console: true,
      oidc: { ...op.settings, admins: { group: "gw-admins", users: [] } },
    });
    op.register([`${stack.api.url}/console/oidc/callback`]);
  });
  afterAll(async () => {
    await stack?.stop();
    await op?.close();
  });

  it("offers the provider beside the token, and an admin who takes it lands signed in", async () => {
    const ui = await openConsole(stack.api.url);
    try {
      const { page } = ui;
      const button = page.getByRole("link", { name: "Sign in with Fixture OP" });
      await button.waitFor();
      await page.getByLabel("Admin token").waitFor();
      await expectAccessible(page, "sign-in with a provider");

      await button.click();
      await page.getByRole("navigation", { name: "Sections" }).waitFor();

      expect(new URL(page.url()).pathname).toBe("/");
      expect((await ui.context.cookies()).some((cookie) => cookie.name === "mgw_console")).toBe(true);
      await expectNoSecrets(ui, [op.clientSecret, ...op.issued]);
    } finally {
      await ui.close();
    }
  });
});
