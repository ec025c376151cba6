import { defineConfig } from "vitest/config";

/**
 * Two tiers. `unit`: tests beside the code (packages/*\/src, scripts/), no emulator, no sockets — `npm run
 * test:unit`. `integration`: the suites under tests/, against the emulator the global setup starts.
 * `npm test` runs both.
 *
 * The unit tier shares one module graph per worker thread (`isolate: false`): a file's imports are
 * loaded once, not once per file — most of the tier's time otherwise. So a unit test leaves no global
 * state behind (env, timers, module mocks): it restores what it changes.
 */
export default defineConfig({
  test: {
    pool: "forks",
    reporters: ["default", "./tests/support/closing-line-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "scripts/**/*.test.ts"],
          pool: "threads",
          isolate: false,
          testTimeout: 10_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["tests/**/*.test.ts"],
          globalSetup: ["tests/support/global-setup.ts"],
          setupFiles: ["tests/support/setup-env.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
