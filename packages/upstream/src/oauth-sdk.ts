/**
 * The MCP SDK's auth helpers that oauth-client.ts uses, which it imports on demand (`import()` of this
 * module, not of the SDK's whole client package: a bundle then keeps only what these need).
 */
export {
  checkResourceAllowed,
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  resolveClientMetadata,
  startAuthorization,
} from "@modelcontextprotocol/client";
