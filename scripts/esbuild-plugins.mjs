import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

/**
 * esbuild plugins shared by `npm run build` and SST's bundling (infra: `nodejs.plugins`).
 * zod re-exports every locale (`z.locales`, ~260 KiB minified); the system only uses English, so the
 * locale index resolves to English alone. Error messages are unchanged: zod registers `en` itself.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)
        ? { path: "zod-locales-en", namespace: "zod-english-only", pluginData: args.resolveDir }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: args.pluginData,
      loader: "js",
    }));
  },
};

/**
 * bowser (~34 KiB minified) parses a browser's user agent for the AWS SDK's browser runtime only
 * (`createUserAgentStringParsingProvider`); the Node runtime's clients never call it. It resolves to a
 * stub that parses nothing, as the SDK itself falls back to when bowser has no `parse`.
 */
const noBrowserUserAgent = {
  name: "no-browser-user-agent",
  setup(build) {
    build.onResolve({ filter: /^bowser$/ }, () => ({ path: "bowser", namespace: "no-browser-user-agent" }));
    build.onLoad({ filter: /.*/, namespace: "no-browser-user-agent" }, () => ({
      contents: "module.exports = { parse: () => undefined };",
      loader: "js",
    }));
  },
};

/**
 * The MCP SDK v2's `@modelcontextprotocol/client` and `@modelcontextprotocol/server` are each published
 * pre-bundled (rolldown chunks named `<name>-<hash>.mjs`), and some of their chunks are the same code
 * in both packages: the JSON Schema validators (`cfWorkerProvider-*`; `ajvProvider-*`, which
 * `mcpSdkLightValidator` below leaves out), the schema-dialect helpers and the bundler's runtime
 * helpers. A bundle of both packages (the gateway, the runner) would hold and load each of those
 * twice; here a chunk the server imports that is the same as one of the client's resolves to the
 * client's file, so the bundle holds one copy.
 * "The same" is checked on the files as installed, so an SDK update never aliases code that differs:
 * the texts are equal but for the hashes in the names of the chunks they import and the source-map
 * comment, each chunk they import is the same in turn, and every other import is the same specifier
 * resolving alike (neither package has a node_modules of its own; none names either package or a
 * `#` import). Chunks that differ stay as they are: each package's own tree-shaken subset of the SDK's
 * internal protocol core (`src-*`), neither of which can stand in for the other.
 */
const SERVER_DIST = /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]server[\\/]dist(?=[\\/])/;
/** A rolldown chunk's file name: its name, then a hash of 8 characters. */
const CHUNK = /^([\w.-]+?)-[\w-]{8}\.mjs$/;
/** Module specifiers in a chunk's text: `from "…"`, `import "…"`, `import("…")`, `require("…")`. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\n]+)\2/g;
const RELATIVE = /^\.\.?\//;
/** Specifiers that resolve differently from each package: the packages themselves, `#` imports. */
const PACKAGE_OWN = /^(@modelcontextprotocol\/(client|server)(\/|$)|#)/;

const mcpSdkSharedChunks = {
  name: "mcp-sdk-shared-chunks",
  setup(build) {
    const chunkName = (path) => CHUNK.exec(basename(path))?.[1];

    /** A file's specifiers, and its text with the chunk hashes they name and its source-map comment out. */
    const texts = new Map();
    function read(file) {
      if (!texts.has(file)) {
        const source = readFileSync(file, "utf8");
        const normalized = source
          .replace(/^\/\/# sourceMappingURL=.*$/gm, "")
          .replace(SPECIFIER, (_, before, quote, specifier) => {
            const name = RELATIVE.test(specifier) ? chunkName(specifier) : undefined;
            const unhashed = name ? join(dirname(specifier), `${name}-*.mjs`) : specifier;
            return `${before}${quote}${unhashed}${quote}`;
          });
        texts.set(file, { normalized, specifiers: [...source.matchAll(SPECIFIER)].map((match) => match[3]) });
      }
      return texts.get(file);
    }

    /** Whether files `a` and `b` are the same code importing the same modules (`assumed`: pairs under way). */
    function same(a, b, assumed) {
      const pair = `${a}\0${b}`;
      if (a === b || assumed.has(pair)) return true;
      assumed.add(pair);
      const [left, right] = [read(a), read(b)];
      if (left.normalized !== right.normalized) return false;
      return left.specifiers.every((specifier, index) => {
        const other = right.specifiers[index];
        if (!RELATIVE.test(specifier)) return specifier === other && !PACKAGE_OWN.test(specifier);
        const [mine, theirs] = [resolve(dirname(a), specifier), resolve(dirname(b), other)];
        // A path to no file is text, not an import (a doc comment's `import('./types')`).
        if (!isFile(mine) && !isFile(theirs)) return specifier === other;
        return isFile(mine) && isFile(theirs) && same(mine, theirs, assumed);
      });
    }

    /** The client's chunk that is the same as the server's chunk `file`, if there is one. */
    const twins = new Map();
    function twinOf(file) {
      if (!twins.has(file)) {
        const dist = SERVER_DIST.exec(file);
        const name = chunkName(file);
        let twin;
        if (dist && name && isFile(file)) {
          const server = dirname(file.slice(0, dist.index + dist[0].length));
          const client = join(dirname(server), "client");
          const dir = join(client, "dist", relative(join(server, "dist"), dirname(file)));
          const ownModules = [server, client].some((root) => existsSync(join(root, "node_modules")));
          if (!ownModules && existsSync(dir))
            twin = readdirSync(dir)
              .filter((candidate) => chunkName(candidate) === name)
              .map((candidate) => join(dir, candidate))
              .find((candidate) => same(file, candidate, new Set()));
        }
        twins.set(file, twin);
      }
      return twins.get(file);
    }

    build.onResolve({ filter: /^\.\.?\/.*\.mjs$/ }, (args) => {
      if (!SERVER_DIST.test(args.importer)) return undefined;
      const twin = twinOf(resolve(args.resolveDir, args.path));
      return twin ? { path: twin } : undefined;
    });
  },
};

/**
 * Each MCP SDK v2 package picks its default JSON Schema validator in its `_shims` module, and the v1
 * SDK's client and server import theirs: on Node, ajv (with ajv-formats; ~150 KiB minified, which
 * evaluates ajv's three dialects when imported). The system builds no default: every SDK client and
 * server it makes is given the SDK's own lighter validator (`jsonSchemaValidator` in
 * packages/upstream/src/json-schema.ts), and validates nothing with it on any path a call takes. So
 * the default is that validator too, leaving ajv out of every bundle: a v2 `_shims` resolves to itself
 * with it, the v1 `ajv-provider.js` to it. Checked on the files as installed: a `_shims` that does not
 * import the validator as expected (a newer SDK) resolves as it is.
 */
const AJV_DEFAULT = /^import \{ (\w+) as AjvJsonSchemaValidator \} from "\.\/ajvProvider-[\w-]{8}\.mjs";$/m;

/** The v1 SDK's client and server modules, the only importers of its default validator. */
const V1_SDK_ENTRY = /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/](client|server)[\\/]index\.js$/;

const mcpSdkLightValidator = {
  name: "mcp-sdk-light-validator",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/(client|server)\/_shims$/ }, async (args) => {
      const pkg = args.path.slice(0, -"/_shims".length);
      const index = await build.resolve(pkg, { kind: "import-statement", resolveDir: args.resolveDir });
      if (index.errors.length > 0) return undefined;
      const file = join(dirname(index.path), "shimsNode.mjs");
      const source = isFile(file) ? readFileSync(file, "utf8") : "";
      if (!AJV_DEFAULT.test(source)) return undefined;
      const contents = source.replace(
        AJV_DEFAULT,
        `import { CfWorkerJsonSchemaValidator as AjvJsonSchemaValidator } from "${pkg}/validators/cf-worker";`,
      );
      return {
        path: file,
        namespace: "mcp-sdk-light-validator",
        pluginData: { contents, dir: dirname(file) },
      };
    });
    build.onResolve({ filter: /^\.\.\/validation\/ajv-provider\.js$/ }, (args) =>
      V1_SDK_ENTRY.test(args.importer)
        ? {
            path: "ajv-provider.js",
            namespace: "mcp-sdk-light-validator",
            pluginData: {
              contents: `export { CfWorkerJsonSchemaValidator as AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";`,
              dir: args.resolveDir,
            },
          }
        : undefined,
    );
    // Imports resolve from where the replaced module is (its own relative ones too).
    build.onLoad({ filter: /.*/, namespace: "mcp-sdk-light-validator" }, (args) => ({
      contents: args.pluginData.contents,
      resolveDir: args.pluginData.dir,
      loader: "js",
    }));
  },
};

/** Whether `path` is a file. */
function isFile(path) {
  return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
}

export default [zodEnglishOnly, noBrowserUserAgent, mcpSdkSharedChunks, mcpSdkLightValidator];
