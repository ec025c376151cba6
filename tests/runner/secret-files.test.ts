/**
 * Secret files: a stdio config with `secretRef` gets the secret rendered in `secretFormat` to a fresh
 * 0600 file whose path replaces `{{secret_file}}` in args and env. The child reads exactly the rendered
 * content; no secret value is in its argv or environment; the file is gone once the child has exited.
 */
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { renderSecretFile, SECRET_FORMATS, type SecretFormat } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cmdline,
  createServer,
  environ,
  pidOf,
  type RunnerStack,
  reaches,
  removeBundle,
  startRunnerStack,
  stdioUpstream,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

const tag = randomBytes(6).toString("hex");

/** Values that need quoting or escaping in every format, each unique to the format and this run. */
function secretValues(format: SecretFormat): Record<string, string> {
  return {
    Z_TOKEN: `tok-${format}-${tag}`,
    API_KEY: `key ${format} "quoted" $HOME \\ #=: ${tag}`,
    multi_line: `line1-${format}-${tag}\nline2`,
    "db.password": `pässwörd-${format}-${tag}`,
  };
}

describe("runner: secret files", () => {
  let stack: RunnerStack;
  const servers = new Map<SecretFormat, { id: string; name: string }>();

  beforeAll(async () => {
    const entry = await stdioUpstream();
    stack = await startRunnerStack();
    await Promise.all(
      SECRET_FORMATS.map(async (format) => {
        const secret = `sec-${format}-${tag}`;
        const put = await stack.call("PUT", `/v1/secrets/${secret}`, { values: secretValues(format) });
        expect(put.status).toBe(200);
        const name = uniqueName(`secret-${format}`);
        const id = await createServer(stack, {
          name,
          command: process.execPath,
          args: [entry, "--name", "{{secret_file}}"],
          env: { SECRET_FILE: "{{secret_file}}", PLAIN: "not-a-secret" },
          secretRef: secret,
          secretFormat: format,
        });
        servers.set(format, { id, name });
      }),
    );
  });

  afterAll(async () => {
    await stack?.cleanup();
    removeBundle();
  });

  it.each(SECRET_FORMATS)(
    "%s: exact rendered content, mode 0600, no value in argv/env, gone after exit",
    async (format) => {
      const { id, name } = servers.get(format) as { id: string; name: string };
      await reaches(stack, id, "connected", 30_000);
      const pid = await pidOf(stack, id);

      // Where the file is: the child's env says (and the same path replaced the placeholder in its argv).
      const envCall = await stack.callTool(`${name}__env`);
      expect(envCall.status).toBe(200);
      const childEnv = JSON.parse(textOf(envCall.body)) as Record<string, string>;
      const path = childEnv.SECRET_FILE as string;
      expect(path).toMatch(new RegExp(`/secret-[0-9a-f-]{36}\\.${format}$`));
      expect(dirname(path)).toBe(childEnv.HOME);
      expect(dirname(dirname(path))).toBe(stack.tempRoot);
      expect(cmdline(pid).slice(-2)).toEqual(["--name", path]);

      // Exactly the rendered content, read by the child itself.
      const read = await stack.callTool(`${name}__read_file`, { path });
      expect(read.status).toBe(200);
      expect(read.body.isError).toBe(false);
      expect(textOf(read.body)).toBe(renderSecretFile(secretValues(format), format));

      // 0600, owned by the child's own uid (the runner's, when it cannot switch uids), while the child lives.
      const stat = statSync(path);
      expect(stat.mode & 0o777).toBe(0o600);
      expect(stat.uid).toBe(statSync(`/proc/${pid}`).uid);
      if (stack.runner?.isolated) expect(stat.uid).not.toBe(process.getuid?.());
      else expect(stat.uid).toBe(process.getuid?.());

      // No secret value in the child's argv or environment (read from /proc, not from the child).
      const args = cmdline(pid).join("\0");
      const env = JSON.stringify(environ(pid));
      for (const value of Object.values(secretValues(format))) {
        for (const piece of [value, ...value.split("\n")]) {
          expect(args).not.toContain(piece);
          expect(env).not.toContain(piece);
        }
      }
      expect(environ(pid)).toMatchObject({ SECRET_FILE: path, PLAIN: "not-a-secret" });

      // The child exits (on its own: the crash tool) → its secret file and temp dir are removed.
      const crash = await stack.callTool(`${name}__crash`);
      expect(crash.status).not.toBe(200);
      await waitFor(
        async () => existsSync(path) || existsSync(dirname(path)),
        (present) => !present,
        { timeoutMs: 10_000 },
      );
    },
  );
});
