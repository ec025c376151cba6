/// <reference path="./.sst/platform/config.d.ts" />

/**
 * MCP Gateway on AWS: `npx sst deploy --stage <name>` (see docs/operations.md "Deploy"). The infra is split by
 * concern under infra/; it names handlers by path and never imports runtime code.
 */
export default $config({
  app(input) {
    const production = input?.stage === "production";
    return {
      name: "mcp-gateway",
      home: "aws",
      removal: production ? "retain" : "remove",
      protect: production,
    };
  },
  async run() {
    const storage = await import("./infra/storage");
    await import("./infra/queue");
    await import("./infra/runner");
    await import("./infra/worker");
    const api = await import("./infra/api");
    return {
      admin: api.admin.url,
      gateway: api.gateway.url,
      mcp: $interpolate`${api.gateway.url}mcp`,
      table: storage.table.name,
    };
  },
});
