/**
 * Secrets: their names and key names only (the API never returns a value); set a new one, replace one
 * (the same form with its names filled in, every value typed again), delete one (confirmed). Values
 * are typed into password fields and cleared once saved: the page holds them only while they are typed.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { request, seg } from "../api";
import {
  ConfirmButton,
  EmptyState,
  Field,
  NothingSent,
  Notice,
  Problem,
  StackTable,
  useAction,
  useCheckedSubmit,
  usePolled,
  when,
} from "../components";
import { secretProblems } from "../form-checks";
import type { SecretSummary } from "../types";

type Row = { key: string; value: string };

export function SecretsPage() {
  const secrets = usePolled(() => request<{ secrets: SecretSummary[] }>("GET", "/v1/secrets"), 0);
  /** The secret being replaced; undefined: the form sets a new one. */
  const [replacing, setReplacing] = useState<SecretSummary | undefined>(undefined);
  /** Bumped to start the form afresh (after a save, a cancel, or choosing another secret). */
  const [formRound, setFormRound] = useState(0);
  const action = useAction();

  const list = secrets.data?.secrets.slice().sort((a, b) => (a.name < b.name ? -1 : 1));
  const startForm = (secret: SecretSummary | undefined) => {
    setReplacing(secret);
    setFormRound((n) => n + 1);
  };
  const remove = (secret: SecretSummary) =>
    action.run(async () => {
      await request("DELETE", `/v1/secrets/${seg(secret.name)}`);
      if (replacing?.name === secret.name) startForm(undefined);
      secrets.reload();
      return `Deleted ${secret.name}.`;
    });

  return (
    <section>
      <h1>Secrets</h1>
      <p class="help intro">
        Sealed key/value maps a stdio server reads from <code>{"{{secret_file}}"}</code> (its secret
        reference). Values can be set or replaced here, never read back.
      </p>
      <Notice text={action.notice} />
      <Problem error={action.error ?? secrets.error} />
      {!list ? (
        secrets.error ? null : (
          <p class="loading">Loading secrets…</p>
        )
      ) : list.length === 0 ? (
        <EmptyState title="No secrets yet">
          <p>Set one below, then name it as a stdio server's secret reference.</p>
        </EmptyState>
      ) : (
        <StackTable caption="Secrets and their key names" columns={["Name", "Keys", "Updated"]}>
          {list.map((secret) => (
            <tr key={secret.name} data-secret={secret.name}>
              <th scope="row" class="mono">
                {secret.name}
              </th>
              <td data-col="keys">
                <span class="cell-label">Keys: </span>
                {secret.keys.length ? (
                  <ul class="inline-list mono">
                    {secret.keys.map((key) => (
                      <li key={key}>{key}</li>
                    ))}
                  </ul>
                ) : (
                  "—"
                )}
              </td>
              <td>
                <span class="cell-label">Updated: </span>
                {when(secret.updatedAt)}
              </td>
              <td class="row-actions">
                <div class="actions">
                  <button
                    type="button"
                    aria-label={`Replace ${secret.name}`}
                    onClick={() => {
                      action.setNotice("");
                      startForm(secret);
                    }}
                  >
                    Replace
                  </button>
                  <ConfirmButton
                    label="Delete"
                    danger
                    question={`Delete the secret ${secret.name}? Servers that name it can no longer start.`}
                    onConfirm={() => remove(secret)}
                  />
                </div>
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      <SecretForm
        key={formRound}
        replacing={replacing}
        onCancel={() => startForm(undefined)}
        onSaved={(saved) => {
          action.setNotice(
            `Saved ${saved.name} (${saved.keys.length} ${saved.keys.length === 1 ? "key" : "keys"}).`,
          );
          startForm(undefined);
          secrets.reload();
        }}
      />
    </section>
  );
}

/** A secret's name and key/value rows; values in password fields, cleared once saved. */
function SecretForm(props: {
  replacing: SecretSummary | undefined;
  onSaved: (saved: SecretSummary) => void;
  onCancel: () => void;
}) {
  const { replacing } = props;
  const [name, setName] = useState(replacing?.name ?? "");
  const [rows, setRows] = useState<Row[]>(
    replacing?.keys.length ? replacing.keys.map((key) => ({ key, value: "" })) : [{ key: "", value: "" }],
  );
  const submit = useCheckedSubmit(
    () =>
      secretProblems(
        name,
        rows.map((row) => row.key),
      ),
    async () => {
      const trimmed = name.trim();
      const values = Object.fromEntries(rows.map((row) => [row.key.trim(), row.value]));
      const saved = await request<SecretSummary>("PUT", `/v1/secrets/${seg(trimmed)}`, { values });
      // The values leave the page's state before anything else happens.
      setRows([{ key: "", value: "" }]);
      setName("");
      props.onSaved(saved);
    },
  );
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => {
    // Replacing: the form (its first value) is where the admin works next.
    if (replacing) first.current?.focus();
  }, [replacing]);
  const title = replacing ? `Replace ${replacing.name}` : "Set a secret";
  const update = (index: number, changes: Partial<Row>) =>
    setRows(rows.map((row, i) => (i === index ? { ...row, ...changes } : row)));
  const nameErrors = submit.errorsOf("name");
  const valueErrors = submit.errorsOf("values");

  return (
    <form class="panel" aria-labelledby="secret-form-title" noValidate onSubmit={submit.onSubmit}>
      <h2 id="secret-form-title">{title}</h2>
      {replacing ? (
        <p class="help">
          Every value is replaced: type each one again. A key you remove is dropped from the secret.
        </p>
      ) : (
        <p class="help">Setting a name that exists replaces that secret.</p>
      )}
      <Field
        label="Secret name"
        id="secret-name"
        help="Letters, digits, '_', '.' or '-'."
        errors={nameErrors}
      >
        <input
          id="secret-name"
          type="text"
          required
          readOnly={replacing !== undefined}
          maxLength={128}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </Field>
      <fieldset class={`field rows${valueErrors.length ? " invalid" : ""}`}>
        <legend>Keys and values</legend>
        {rows.map((row, index) => (
          <div class="row" key={index}>
            <input
              type="text"
              aria-label={`Key ${index + 1} name`}
              placeholder="key, e.g. API_KEY"
              autoComplete="off"
              value={row.key}
              onInput={(event) => update(index, { key: event.currentTarget.value })}
            />
            <input
              ref={index === 0 ? first : undefined}
              type="password"
              aria-label={`Key ${index + 1} value`}
              placeholder="value"
              autoComplete="new-password"
              value={row.value}
              onInput={(event) => update(index, { value: event.currentTarget.value })}
            />
            <button
              type="button"
              aria-label={`Remove key ${row.key || index + 1}`}
              onClick={() => setRows(rows.filter((_, i) => i !== index))}
            >
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setRows([...rows, { key: "", value: "" }])}>
          Add key
        </button>
        {valueErrors.map((message) => (
          <p class="field-error" key={message} role="alert">
            {message}
          </p>
        ))}
      </fieldset>
      {submit.stopped ? (
        <NothingSent />
      ) : (
        <Problem error={nameErrors.length || valueErrors.length ? undefined : submit.error} />
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={submit.busy}>
          {replacing ? "Replace secret" : "Save secret"}
        </button>
        {replacing ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
