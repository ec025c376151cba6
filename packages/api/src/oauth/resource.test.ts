import { OpenAPIHono } from "@hono/zod-openapi";
import {
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
} from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../env";
import { authorizationServerMetadata } from "./metadata";
import { MCP_SCOPE, registerProtectedResourceRoutes, resourceMetadataUrl, resourceOf } from "./resource";

const ISSUER = "https://gw.example.com";

describe("the protected resources, beside the MCP SDK's resource-server helpers", () => {
  it.each([undefined, "alpha"])("name the metadata URL the SDK derives (RFC 9728 §3.1) for %s", (server) => {
    expect(resourceMetadataUrl(ISSUER, server)).toBe(
      getOAuthProtectedResourceMetadataUrl(new URL(resourceOf(ISSUER, server))),
    );
  });

  it.each([
    [undefined, "MCP Gateway (every server)"],
    ["alpha", "MCP Gateway: alpha"],
  ])("serve for %s the SDK's metadata document, and the bearer methods too", async (server, name) => {
    const app = new OpenAPIHono<AppEnv>();
    registerProtectedResourceRoutes(app, ISSUER, async (known) => known === "alpha");

    const response = await app.request(new URL(resourceMetadataUrl(ISSUER, server)).pathname);

    expect(await response.json()).toEqual({
      ...buildOAuthProtectedResourceMetadata({
        oauthMetadata: authorizationServerMetadata(ISSUER),
        resourceServerUrl: new URL(resourceOf(ISSUER, server)),
        scopesSupported: [MCP_SCOPE],
        resourceName: name,
      }),
      bearer_methods_supported: ["header"],
    });
  });
});
