/**
 * Import a `.mcp.json` (Claude Desktop / Claude Code / Cursor `mcpServers`, VS Code `servers`): paste
 * it or pick a file (read here, in the browser), choose skip or replace for names already taken,
 * preview what would be created, replaced and skipped (the API's dry run: the same checks as the
 * import), then import. The document — credentials included — is cleared once imported.
 */
import { useRef, useState } from "preact/hooks";
import { ApiError, request } from "../api";
import { Field, Problem } from "../components";
import { href } from "../router";
import type { ImportPreview, ImportResult } from "../types";

type Mode = "skip" | "replace";

/** The API's body limit: a bigger file would be refused anyway. */
const MAX_FILE_BYTES = 1024 * 1024;
const EXAMPLE = '{\n  "mcpServers": {\n    "docs": { "url": "https://example.com/mcp" }\n  }\n}';

export function ImportPage() {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<Mode>("skip");
  const [preview, setPreview] = useState<ImportPreview | undefined>(undefined);
  const [imported, setImported] = useState<ImportPreview | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const file = useRef<HTMLInputElement>(null);

  /** Runs an API step with the pasted document: its JSON checked here first, problems shown. */
  const run = async (step: (document: unknown) => Promise<void>) => {
    setError(undefined);
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (caught) {
      setPreview(undefined);
      setError(new Error(`The document is not valid JSON: ${(caught as Error).message}`));
      return;
    }
    setBusy(true);
    try {
      await step(document);
    } catch (caught) {
      setPreview(undefined);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const showPreview = (onConflict: Mode) =>
    run(async (document) => {
      setImported(undefined);
      setPreview(
        await request<ImportPreview>(
          "POST",
          `/v1/servers/import?onConflict=${onConflict}&dryRun=true`,
          document,
        ),
      );
    });
  const importNow = (plan: ImportPreview) =>
    run(async (document) => {
      const result = await request<ImportResult>("POST", `/v1/servers/import?onConflict=${mode}`, document);
      const replaced = new Set(plan.replaced);
      const names = result.servers.map((server) => server.name);
      setImported({
        created: names.filter((name) => !replaced.has(name)),
        replaced: names.filter((name) => replaced.has(name)),
        skipped: result.skipped,
      });
      // The document may hold credentials: nothing of it stays on the page once it is stored.
      setText("");
      setPreview(undefined);
      if (file.current) file.current.value = "";
    });

  return (
    <section>
      <h1>Import a .mcp.json</h1>
      <p class="help intro">
        Claude Desktop, Claude Code and Cursor configurations (<code>mcpServers</code>) and VS Code's (
        <code>servers</code>). Everything is imported or nothing is.
      </p>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void showPreview(mode);
        }}
      >
        <Field
          label="Upload a file"
          id="import-file"
          help="Read in this browser into the document below; nothing is sent before you preview."
        >
          <input
            id="import-file"
            ref={file}
            type="file"
            accept=".json,application/json"
            aria-describedby="import-file-help"
            onChange={async (event) => {
              const chosen = event.currentTarget.files?.[0];
              if (!chosen) return;
              setPreview(undefined);
              if (chosen.size > MAX_FILE_BYTES) {
                setError(new Error("The file is larger than 1 MiB: that is not a .mcp.json."));
                return;
              }
              setError(undefined);
              setText(await chosen.text());
            }}
          />
        </Field>
        <Field label="Document (JSON)" id="import-document">
          <textarea
            id="import-document"
            class="mono document"
            spellcheck={false}
            autoComplete="off"
            autoCapitalize="off"
            rows={12}
            placeholder={EXAMPLE}
            value={text}
            onInput={(event) => {
              setText(event.currentTarget.value);
              setPreview(undefined);
            }}
          />
        </Field>
        <fieldset class="field choices">
          <legend>When a server of the same name exists</legend>
          {(
            [
              ["skip", "Skip it: keep the existing server as it is"],
              [
                "replace",
                "Replace it: the document's configuration (its headers and env too) takes its place",
              ],
            ] as const
          ).map(([value, label]) => (
            <label key={value}>
              <input
                type="radio"
                name="onConflict"
                value={value}
                checked={mode === value}
                onChange={() => {
                  setMode(value);
                  if (preview) void showPreview(value);
                }}
              />{" "}
              {label}
            </label>
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !text.trim()}>
            Preview
          </button>
          <button
            type="button"
            disabled={!text}
            onClick={() => {
              setText("");
              setPreview(undefined);
              setError(undefined);
              if (file.current) file.current.value = "";
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {error ? <ImportProblem error={error} /> : null}
        {preview ? (
          <section class="import-preview" aria-labelledby="preview-title">
            <h2 id="preview-title">Preview</h2>
            <Lists outcome={preview} future />
            {preview.created.length + preview.replaced.length === 0 ? (
              <p>Nothing to import: every server in the document is skipped.</p>
            ) : (
              <button type="button" class="primary" disabled={busy} onClick={() => importNow(preview)}>
                Import {count(preview.created.length + preview.replaced.length)}
              </button>
            )}
          </section>
        ) : null}
        {imported ? (
          <section class="import-done notice" aria-labelledby="imported-title">
            <h2 id="imported-title">Imported</h2>
            <Lists outcome={imported} />
            <p>
              <a href={href("servers")}>Go to the servers</a> to watch them connect.
            </p>
          </section>
        ) : null}
      </div>
    </section>
  );
}

/** The API's problem, with a hint for the codes an import answers. */
function ImportProblem({ error }: { error: unknown }) {
  const hint =
    error instanceof ApiError && error.code === "import.invalid_entry"
      ? "Nothing was imported: fix the entries named above, then preview again."
      : undefined;
  return (
    <>
      <Problem error={error} />
      {hint ? <p class="help">{hint}</p> : null}
    </>
  );
}

/** The created, replaced and skipped names, each with its count. */
function Lists({ outcome, future = false }: { outcome: ImportPreview; future?: boolean }) {
  const rows: Array<[keyof ImportPreview, string]> = future
    ? [
        ["created", "Will be created"],
        ["replaced", "Will be replaced"],
        ["skipped", "Will be skipped"],
      ]
    : [
        ["created", "Created"],
        ["replaced", "Replaced"],
        ["skipped", "Skipped"],
      ];
  return (
    <div class="outcome">
      {rows.map(([key, title]) => (
        <div key={key} class="outcome-list" data-outcome={key}>
          <h3>
            {title} ({outcome[key].length})
          </h3>
          {outcome[key].length > 0 ? (
            <ul>
              {outcome[key].map((name) => (
                <li key={name}>{name}</li>
              ))}
            </ul>
          ) : (
            <p class="help">None.</p>
          )}
        </div>
      ))}
    </div>
  );
}

function count(servers: number): string {
  return servers === 1 ? "1 server" : `${servers} servers`;
}
