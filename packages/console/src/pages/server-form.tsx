/**
 * Add or edit a server. HTTP: URL and a headers editor; stdio: command, args, an env editor, a secret
 * reference and its format, and the scope. Stored header and env values come back masked: a mask left
 * as it is keeps the stored value, a removed row removes it, anything typed replaces it. The API's
 * messages appear next to their fields.
 */
import { useEffect, useState } from "preact/hooks";
import { request, seg } from "../api";
import { Field, fieldErrors, Problem } from "../components";
import { navigate } from "../router";
import type { Server } from "../types";

type Row = { key: string; value: string };

interface Draft {
  transport: "http" | "stdio";
  name: string;
  enabled: boolean;
  timeoutSeconds: string;
  url: string;
  headers: Row[];
  command: string;
  args: string[];
  env: Row[];
  scope: "project" | "thread";
  secretRef: string;
  secretFormat: string;
}

const EMPTY: Draft = {
  transport: "http",
  name: "",
  enabled: true,
  timeoutSeconds: "30",
  url: "",
  headers: [],
  command: "",
  args: [],
  env: [],
  scope: "project",
  secretRef: "",
  secretFormat: "",
};

function draftOf(server: Server): Draft {
  const rows = (map: Record<string, string> | undefined) =>
    Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));
  return {
    transport: server.transport,
    name: server.name,
    enabled: server.enabled,
    timeoutSeconds: String(server.timeoutSeconds),
    url: server.url ?? "",
    headers: rows(server.headers),
    command: server.command ?? "",
    args: server.args ?? [],
    env: rows(server.env),
    scope: server.scope,
    secretRef: server.secretRef ?? "",
    secretFormat: server.secretFormat ?? "",
  };
}

/** The request body for a draft: a whole spec to create, or the editable fields to patch. */
function bodyOf(draft: Draft, editing: boolean): Record<string, unknown> {
  const map = (rows: Row[]) =>
    Object.fromEntries(rows.filter((row) => row.key.trim()).map((row) => [row.key.trim(), row.value]));
  const common = {
    name: draft.name.trim(),
    enabled: draft.enabled,
    timeoutSeconds: Number(draft.timeoutSeconds),
  };
  if (draft.transport === "http") {
    return {
      ...(editing ? {} : { transport: "http" }),
      ...common,
      url: draft.url.trim(),
      headers: map(draft.headers),
    };
  }
  return {
    ...(editing ? {} : { transport: "stdio" }),
    ...common,
    command: draft.command,
    args: draft.args,
    env: map(draft.env),
    scope: draft.scope,
    ...(draft.secretRef.trim()
      ? {
          secretRef: draft.secretRef.trim(),
          ...(draft.secretFormat ? { secretFormat: draft.secretFormat } : {}),
        }
      : editing
        ? { secretRef: null }
        : {}),
  };
}

export function ServerFormPage({ id }: { id?: string }) {
  const editing = id !== undefined;
  const [draft, setDraft] = useState<Draft | undefined>(editing ? undefined : EMPTY);
  const [version, setVersion] = useState<number | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!id) return;
    request<Server>("GET", `/v1/servers/${seg(id)}`).then((server) => {
      setDraft(draftOf(server));
      setVersion(server.version);
    }, setError);
  }, [id]);

  if (!draft) return error ? <Problem error={error} /> : <p class="loading">Loading…</p>;
  const set = (changes: Partial<Draft>) => setDraft({ ...draft, ...changes });
  const errorsOf = (field: string, codes: string[] = []) => fieldErrors(error, field, codes);

  return (
    <section>
      <h1>{editing ? `Edit ${draft.name}` : "Add a server"}</h1>
      <form
        noValidate
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            const saved = editing
              ? await request<Server>("PATCH", `/v1/servers/${seg(id)}`, bodyOf(draft, true), {
                  "if-match": `"${version}"`,
                })
              : await request<Server>("POST", "/v1/servers", bodyOf(draft, false));
            navigate("servers", saved.name);
          } catch (caught) {
            setError(caught);
          } finally {
            setBusy(false);
          }
        }}
      >
        {editing ? null : (
          <fieldset class="field">
            <legend>Kind</legend>
            <label>
              <input
                type="radio"
                name="transport"
                value="http"
                checked={draft.transport === "http"}
                onChange={() => set({ transport: "http" })}
              />{" "}
              Remote (streamable HTTP)
            </label>
            <label>
              <input
                type="radio"
                name="transport"
                value="stdio"
                checked={draft.transport === "stdio"}
                onChange={() => set({ transport: "stdio" })}
              />{" "}
              Command (stdio)
            </label>
          </fieldset>
        )}
        <Field
          label="Name"
          id="name"
          help="Letters, digits, - and _: tools appear as <name>__<tool>."
          errors={errorsOf("name", ["server.name_taken"])}
        >
          <input
            id="name"
            type="text"
            required
            value={draft.name}
            onInput={(e) => set({ name: e.currentTarget.value })}
          />
        </Field>
        {draft.transport === "http" ? (
          <>
            <Field
              label="URL"
              id="url"
              errors={errorsOf("url", ["server.url_forbidden", "server.credentials_origin_changed"])}
            >
              <input
                id="url"
                type="url"
                required
                placeholder="https://example.com/mcp"
                value={draft.url}
                onInput={(e) => set({ url: e.currentTarget.value })}
              />
            </Field>
            <MapEditor
              legend="Headers"
              name="header"
              rows={draft.headers}
              onChange={(headers) => set({ headers })}
              help="Stored values show masked: leave a mask as it is to keep the value, remove the row to drop it."
              errors={errorsOf("headers")}
            />
          </>
        ) : (
          <>
            <Field label="Command" id="command" errors={errorsOf("command")}>
              <input
                id="command"
                type="text"
                required
                placeholder="npx"
                value={draft.command}
                onInput={(e) => set({ command: e.currentTarget.value })}
              />
            </Field>
            <ListEditor
              legend="Arguments"
              name="argument"
              items={draft.args}
              onChange={(args) => set({ args })}
              errors={errorsOf("args")}
            />
            <MapEditor
              legend="Environment"
              name="env"
              rows={draft.env}
              onChange={(env) => set({ env })}
              help="Stored values show masked: leave a mask as it is to keep the value, remove the row to drop it."
              errors={errorsOf("env")}
            />
            <Field
              label="Secret reference"
              id="secretRef"
              help="A secret from the secret store, written to {{secret_file}} for the command."
              errors={errorsOf("secretRef")}
            >
              <input
                id="secretRef"
                type="text"
                value={draft.secretRef}
                onInput={(e) => set({ secretRef: e.currentTarget.value })}
              />
            </Field>
            <Field label="Secret format" id="secretFormat" errors={errorsOf("secretFormat")}>
              <select
                id="secretFormat"
                value={draft.secretFormat}
                onChange={(e) => set({ secretFormat: e.currentTarget.value })}
              >
                <option value="">default (env)</option>
                <option value="env">env</option>
                <option value="properties">properties</option>
                <option value="json">json</option>
                <option value="yaml">yaml</option>
              </select>
            </Field>
            <Field
              label="Scope"
              id="scope"
              help="Thread: one instance per thread, with its own worktree."
              errors={errorsOf("scope")}
            >
              <select
                id="scope"
                value={draft.scope}
                onChange={(e) => set({ scope: e.currentTarget.value as Draft["scope"] })}
              >
                <option value="project">project</option>
                <option value="thread">thread</option>
              </select>
            </Field>
          </>
        )}
        <Field label="Timeout (seconds)" id="timeoutSeconds" errors={errorsOf("timeoutSeconds")}>
          <input
            id="timeoutSeconds"
            type="number"
            min={1}
            max={900}
            value={draft.timeoutSeconds}
            onInput={(e) => set({ timeoutSeconds: e.currentTarget.value })}
          />
        </Field>
        <div class="field">
          <label>
            <input
              type="checkbox"
              checked={draft.enabled}
              onChange={(e) => set({ enabled: e.currentTarget.checked })}
            />{" "}
            Enabled
          </label>
        </div>
        <Problem error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {editing ? "Save" : "Add server"}
          </button>
          <a class="button" href={editing ? `#/servers/${seg(draft.name)}` : "#/servers"}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}

/** Name/value rows (headers, env): add, change, remove. */
function MapEditor(props: {
  legend: string;
  name: string;
  rows: Row[];
  onChange: (rows: Row[]) => void;
  help: string;
  errors: string[];
}) {
  const { rows, onChange } = props;
  const update = (index: number, changes: Partial<Row>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...changes } : row)));
  return (
    <fieldset class={`field rows${props.errors.length ? " invalid" : ""}`}>
      <legend>{props.legend}</legend>
      {rows.map((row, index) => (
        <div class="row" key={index}>
          <input
            type="text"
            aria-label={`${props.legend} ${index + 1} name`}
            placeholder="name"
            value={row.key}
            onInput={(e) => update(index, { key: e.currentTarget.value })}
          />
          <input
            type="text"
            aria-label={`${props.legend} ${index + 1} value`}
            placeholder="value"
            autoComplete="off"
            value={row.value}
            onInput={(e) => update(index, { value: e.currentTarget.value })}
          />
          <button
            type="button"
            aria-label={`Remove ${props.legend.toLowerCase()} ${row.key || index + 1}`}
            onClick={() => onChange(rows.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { key: "", value: "" }])}>
        Add {props.name}
      </button>
      <p class="help">{props.help}</p>
      {props.errors.map((message) => (
        <p class="field-error" key={message} role="alert">
          {message}
        </p>
      ))}
    </fieldset>
  );
}

/** A list of strings (arguments): add, change, remove. */
function ListEditor(props: {
  legend: string;
  name: string;
  items: string[];
  onChange: (items: string[]) => void;
  errors: string[];
}) {
  const { items, onChange } = props;
  return (
    <fieldset class="field rows">
      <legend>{props.legend}</legend>
      {items.map((item, index) => (
        <div class="row" key={index}>
          <input
            type="text"
            aria-label={`${props.name} ${index + 1}`}
            value={item}
            onInput={(e) => onChange(items.map((v, i) => (i === index ? e.currentTarget.value : v)))}
          />
          <button
            type="button"
            aria-label={`Remove ${props.name} ${index + 1}`}
            onClick={() => onChange(items.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...items, ""])}>
        Add {props.name}
      </button>
      {props.errors.map((message) => (
        <p class="field-error" key={message} role="alert">
          {message}
        </p>
      ))}
    </fieldset>
  );
}
