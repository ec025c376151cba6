/// <reference path="./.sst/platform/config.d.ts" />

/**
 * MCP Gateway on AWS: `npx sst deploy --stage <name>` (see docs/operations.md "Deploy"). The infra is split by
 * concern under infra/; it names handlers by path and never imports runtime code. Each stage's settings
 * are in infra/stages.ts, not the deployer's shell.
 */
export default $config({
  app(input) {
    // infra/stages.ts's isProduction (SST allows no top-level import here; a test holds the two alike).
    const production = input?.stage === "production";
    return {
      name: "mcp-gateway",
      home: "aws",
      removal: production ? "retain" : "remove",
      protect: production,
    };
  },
  async run() {
    // A stage's settings are checked before anything is built: a missing or wrong one fails with a sentence.
    (await import("./infra/stages")).stageSettings($app.stage);
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
