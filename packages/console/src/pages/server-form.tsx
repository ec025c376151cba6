/**
 * Add or edit a server. HTTP: URL and a headers editor; stdio: command, args, an env editor, a secret
 * reference and its format, the scope and the isolation (one child for every caller, or one per
 * caller). Stored header and env values come back masked: a mask left
 * as it is keeps the stored value, a removed row removes it, anything typed replaces it. The API's
 * messages appear next to their fields.
 */
import { assertNever } from "@mcpgw/core/exhaustive";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request, seg } from "../api";
import { Field, NothingSent, Problem, useCheckedSubmit } from "../components";
import { PINNING_LABELS, pinningOf } from "../pinning";
import { navigate } from "../router";
import { draftProblems, type Row, splitCommandLine } from "../server-draft-check";
import type { Pinning, Server } from "../types";

interface Draft {
  transport: Server["transport"];
  name: string;
  enabled: boolean;
  timeoutSeconds: string;
  url: string;
  headers: Row[];
  /** The gateway signs in to the upstream with OAuth; the auth's other fields are kept. */
  oauth: boolean;
  /** One authorization for every caller, or each caller's own. */
  oauthMode: "shared" | "per_user";
  auth: Server["auth"];
  command: string;
  args: string[];
  env: Row[];
  scope: "project" | "thread";
  isolation: "shared" | "per_caller";
  secretRef: string;
  secretFormat: string;
  /** How tool definitions are pinned; "" = the gateway's default. */
  pinning: "" | Pinning;
  /** The pinning the server had when loaded: sent only when changed, so a default stays a default. */
  pinningWas: "" | Pinning;
}

const EMPTY: Draft = {
  transport: "http",
  name: "",
  enabled: true,
  timeoutSeconds: "30",
  url: "",
  headers: [],
  oauth: false,
  oauthMode: "shared",
  auth: undefined,
  command: "",
  args: [],
  env: [],
  scope: "project",
  isolation: "shared",
  secretRef: "",
  secretFormat: "",
  pinning: "",
  pinningWas: "",
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
    oauth: server.auth?.type === "oauth",
    oauthMode: server.auth?.type === "oauth" ? server.auth.mode : "shared",
    auth: server.auth,
    command: server.command ?? "",
    args: server.args ?? [],
    env: rows(server.env),
    scope: server.scope,
    isolation: server.isolation ?? "shared",
    secretRef: server.secretRef ?? "",
    secretFormat: server.secretFormat ?? "",
    pinning: pinningOf(server),
    pinningWas: pinningOf(server),
  };
}

/** The request body for a draft: a whole spec to create, or the editable fields to patch. */
function bodyOf(draft: Draft, editing: boolean): Record<string, unknown> {
  const common = {
    ...(editing ? {} : { transport: draft.transport }),
    name: draft.name.trim(),
    enabled: draft.enabled,
    timeoutSeconds: Number(draft.timeoutSeconds),
    ...(draft.pinning && draft.pinning !== draft.pinningWas ? { pinning: draft.pinning } : {}),
  };
  switch (draft.transport) {
    case "http":
      return { ...common, ...httpFields(draft, editing) };
    case "stdio":
      return { ...common, ...stdioFields(draft, editing) };
    default:
      return assertNever(draft.transport);
  }
}

/** An HTTP draft's own fields: URL, headers and OAuth (a client_credentials auth set through the API is kept). */
function httpFields(draft: Draft, editing: boolean): Record<string, unknown> {
  const machine = draft.auth?.type === "client_credentials";
  const oauth = draft.auth?.type === "oauth" ? draft.auth : { type: "oauth" as const };
  const auth = machine
    ? undefined
    : draft.oauth
      ? { ...oauth, mode: draft.oauthMode }
      : editing
        ? null
        : undefined;
  return {
    url: draft.url.trim(),
    headers: mapOf(draft.headers),
    ...(auth === undefined ? {} : { auth }),
  };
}

/** A stdio draft's own fields: command, args, env, secret reference, scope and isolation. */
function stdioFields(draft: Draft, editing: boolean): Record<string, unknown> {
  return {
    command: draft.command,
    args: draft.args,
    env: mapOf(draft.env),
    scope: draft.scope,
    isolation: draft.isolation,
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

/** The map an editor's rows stand for (rows without a name left out). */
function mapOf(rows: Row[]): Record<string, string> {
  return Object.fromEntries(rows.filter((row) => row.key.trim()).map((row) => [row.key.trim(), row.value]));
}

type TextKey = "name" | "url" | "command" | "secretRef" | "timeoutSeconds";
interface TextOptions {
  type?: "text" | "url";
  /** A number typed as text (so what was typed can be told back: `1e400`), with a numeric keyboard. */
  numeric?: boolean;
  required?: boolean;
  placeholder?: string;
  help?: string;
  /** Problem codes about this field (their detail shows next to it). */
  codes?: string[];
}
type Choice = { value: string; label: string };

/** Every kind a server may be, labelled (a new kind must be given a label). */
const TRANSPORT_LABELS: Record<Draft["transport"], string> = {
  http: "Remote (streamable HTTP)",
  stdio: "Command (stdio)",
};
const TRANSPORTS = Object.entries(TRANSPORT_LABELS).map(([value, label]) => ({
  value: value as Draft["transport"],
  label,
}));
const SECRET_FORMATS: Choice[] = [
  { value: "", label: "default (env)" },
  ...["env", "properties", "json", "yaml"].map((value) => ({ value, label: value })),
];
const SCOPES: Choice[] = ["project", "thread"].map((value) => ({ value, label: value }));
const ISOLATIONS: Choice[] = [
  { value: "shared", label: "shared — one child for every caller" },
  { value: "per_caller", label: "per caller — a child of its own for each caller" },
];
const PINNINGS: Choice[] = Object.entries(PINNING_LABELS).map(([value, label]) => ({ value, label }));
/** The fields the form shows the API's messages beside (the rest go in the problem box). */
const FORM_FIELDS = [
  "name",
  "url",
  "command",
  "args",
  "env",
  "headers",
  "auth",
  "secretRef",
  "secretFormat",
  "scope",
  "isolation",
  "pinning",
  "timeoutSeconds",
];
const MASK_HELP =
  "Stored values show masked: leave a mask as it is to keep the value, remove the row to drop it.";

export function ServerFormPage({ id }: { id?: string }) {
  const editing = id !== undefined;
  const [draft, setDraft] = useState<Draft | undefined>(editing ? undefined : EMPTY);
  const [version, setVersion] = useState<number | undefined>(undefined);
  const [loadError, setLoadError] = useState<unknown>(undefined);
  const submit = useCheckedSubmit(
    () => (draft ? draftProblems(draft) : {}),
    async () => {
      if (!draft) return;
      const saved = editing
        ? await request<Server>("PATCH", `/v1/servers/${seg(id)}`, bodyOf(draft, true), {
            "if-match": `"${version}"`,
          })
        : await request<Server>("POST", "/v1/servers", bodyOf(draft, false));
      navigate("servers", saved.name);
    },
  );

  /** Reads the server (again, after a conflict: the edits made here are dropped for what is stored). */
  const load = (name: string) =>
    request<Server>("GET", `/v1/servers/${seg(name)}`).then((server) => {
      setDraft(draftOf(server));
      setVersion(server.version);
      setLoadError(undefined);
      submit.reset();
    }, setLoadError);
  useEffect(() => {
    if (id) void load(id);
  }, [id]);

  if (!draft) return loadError ? <Problem error={loadError} /> : <p class="loading">Loading…</p>;
  const set = (changes: Partial<Draft>) => setDraft({ ...draft, ...changes });
  const { errorsOf } = submit;
  const conflict = submit.error instanceof ApiError && submit.error.code === "request.precondition_failed";
  const split = draft.transport === "stdio" ? splitCommandLine(draft.command) : undefined;
  const textField = (key: TextKey, label: string, options: TextOptions = {}) => (
    <Field label={label} id={key} help={options.help} errors={errorsOf(key, options.codes)}>
      <input
        id={key}
        type={options.type ?? "text"}
        inputMode={options.numeric ? "numeric" : undefined}
        required={options.required}
        placeholder={options.placeholder}
        value={draft[key]}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
      />
    </Field>
  );
  const selectField = (
    key: "secretFormat" | "scope" | "isolation" | "pinning",
    label: string,
    choices: Choice[],
    help?: string,
  ) => (
    <Field label={label} id={key} help={help} errors={errorsOf(key)}>
      <select id={key} value={draft[key]} onChange={(e) => set({ [key]: e.currentTarget.value })}>
        {choices.map(({ value, label: text }) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );

  /** The fields only the draft's kind has. */
  const kindFields = () => {
    switch (draft.transport) {
      case "http":
        return (
          <>
            {textField("url", "URL", {
              type: "url",
              required: true,
              placeholder: "https://example.com/mcp",
              codes: ["server.url_forbidden", "server.credentials_origin_changed"],
            })}
            <MapEditor
              legend="Headers"
              name="header"
              rows={draft.headers}
              onChange={(headers) => set({ headers })}
              help={MASK_HELP}
              errors={errorsOf("headers")}
            />
            <Field
              label="Sign in with OAuth"
              id="oauth"
              help="The upstream takes OAuth: the gateway signs in to it, authorized from the server's page."
              errors={errorsOf("auth")}
            >
              <input
                id="oauth"
                type="checkbox"
                checked={draft.oauth}
                disabled={draft.auth?.type === "client_credentials"}
                onChange={(e) => set({ oauth: e.currentTarget.checked })}
              />
            </Field>
            {draft.oauth ? (
              <Field
                label="OAuth connection"
                id="oauth-mode"
                help="Shared: an admin authorizes once and every caller uses that connection. Per user: each caller authorizes their own connection when a call first needs it, and calls carry their own token."
              >
                <select
                  id="oauth-mode"
                  value={draft.oauthMode}
                  onChange={(e) => set({ oauthMode: e.currentTarget.value as Draft["oauthMode"] })}
                >
                  <option value="shared">Shared</option>
                  <option value="per_user">Per user</option>
                </select>
              </Field>
            ) : null}
            {draft.auth?.type === "client_credentials" ? (
              <p class="help">
                Signs in as a machine client (client_credentials); change it through the API.
              </p>
            ) : null}
          </>
        );
      case "stdio":
        return (
          <>
            {textField("command", "Command", {
              required: true,
              placeholder: "npx",
              help: "The program alone: its arguments go in their own fields below.",
            })}
            {split ? (
              <p class="hint" role="status">
                This looks like a whole command line: the program is <code>{split.command}</code> and the rest
                are arguments.{" "}
                <button
                  type="button"
                  onClick={() => set({ command: split.command, args: [...split.args, ...draft.args] })}
                >
                  Split into command and arguments
                </button>
              </p>
            ) : null}
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
              help={MASK_HELP}
              errors={errorsOf("env")}
            />
            {textField("secretRef", "Secret reference", {
              help: "A secret from the secret store, written to {{secret_file}} for the command.",
            })}
            {selectField("secretFormat", "Secret format", SECRET_FORMATS)}
            {selectField("scope", "Scope", SCOPES, "Thread: one instance per thread, with its own worktree.")}
            {selectField(
              "isolation",
              "Isolation",
              ISOLATIONS,
              "Per caller: each user or key gets its own process (own uid, HOME and secret file), so state kept in one is never another's. A thread-scoped server keeps one per thread.",
            )}
          </>
        );
      default:
        return assertNever(draft.transport);
    }
  };

  return (
    <section>
      <h1>{editing ? `Edit ${draft.name}` : "Add a server"}</h1>
      <form noValidate onSubmit={submit.onSubmit}>
        {editing ? null : (
          <fieldset class="field">
            <legend>Kind</legend>
            {TRANSPORTS.map(({ value, label }) => (
              <label key={value}>
                <input
                  type="radio"
                  name="transport"
                  value={value}
                  checked={draft.transport === value}
                  onChange={() => set({ transport: value })}
                />{" "}
                {label}
              </label>
            ))}
          </fieldset>
        )}
        {textField("name", "Name", {
          required: true,
          help: "Letters, digits, - and _: tools appear as <name>__<tool>.",
          codes: ["server.name_taken"],
        })}
        {kindFields()}
        {textField("timeoutSeconds", "Timeout (seconds)", { numeric: true, help: "1 to 900." })}
        {selectField(
          "pinning",
          "Tool pinning",
          editing ? PINNINGS : [{ value: "", label: "the gateway's default" }, ...PINNINGS],
          "Pinned tools keep the definitions clients first saw; with approve, a changed or new tool waits on this server's page.",
        )}
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
        {submit.stopped ? (
          <NothingSent />
        ) : conflict ? (
          <div class="problem" role="alert">
            <strong>{(submit.error as ApiError).detail}</strong>{" "}
            <button type="button" onClick={() => id && void load(id)}>
              Reload the server
            </button>
            {loadError ? <Problem error={loadError} /> : null}
          </div>
        ) : (
          <Problem error={submit.error} fields={FORM_FIELDS} />
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
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
  // Values are secrets (the API masks them): typed hidden, as a secret's value is, unless asked to show.
  const [shown, setShown] = useState(false);
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
            type={shown ? "text" : "password"}
            // A secret of the upstream, not the console's: no password manager offers to save or fill it.
            autoComplete="new-password"
            data-1p-ignore
            data-lpignore="true"
            data-bwignore
            aria-label={`${props.legend} ${index + 1} value`}
            placeholder="value"
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
      {rows.length > 0 ? (
        <label class="show-values">
          <input type="checkbox" checked={shown} onChange={(e) => setShown(e.currentTarget.checked)} /> Show{" "}
          {props.legend.toLowerCase()} values
        </label>
      ) : null}
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
