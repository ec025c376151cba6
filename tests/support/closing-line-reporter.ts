import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Ends every run with one plain line, `vitest: N passed, N failed[, N skipped]`, after vitest's own
 * summary: the closing line CI's reader understands whatever the runner. A file that fails to load
 * and an unhandled error each count as a failure, so a run can't close "0 failed" while red.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of modules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      failed += failedHere === 0 && module.state() === "failed" ? 1 : failedHere;
    }
    process.stdout.write(
      `\nvitest: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
    );
  }
}
