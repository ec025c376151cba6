/** Small pieces every page uses: state badges, problems, fields, confirmations, empty states. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, errorLine, type FieldError } from "./api";
import type { ServerState } from "./types";

const STATE_LABELS: Record<ServerState, string> = {
  connecting: "Connecting",
  connected: "Connected",
  failed: "Failed",
  disabled: "Disabled",
};

/** A server's state as colour and text (never colour alone), with its reason when it failed. */
export function StateBadge(props: {
  state: ServerState;
  reason?: string | null;
  /** The status's last error: it names what `failed` alone does not (a command not found, an exit). */
  lastError?: string | null;
}) {
  const reason = reasonLabel(props.reason, props.lastError);
  return (
    <span class={`badge state-${props.state}`} data-state={props.state}>
      <span class="dot" aria-hidden="true" />
      {STATE_LABELS[props.state]}
      {reason ? <span class="reason"> · {reason}</span> : null}
    </span>
  );
}

/**
 * A failure's reason in words: `not_responding` → "not responding"; the catch-all `failed` (which the
 * badge's "Failed" already says) is named from the last error when it tells more, else left out.
 */
export function reasonLabel(
  reason: string | null | undefined,
  lastError?: string | null,
): string | undefined {
  if (!reason) return undefined;
  if (reason !== "failed") return reason.replaceAll("_", " ");
  // The gateway's own sentence only: the child's stderr lines after it could say anything.
  const error = errorSentence(lastError ?? "");
  if (/command not found/.test(error)) return "command not found";
  if (/cannot be run/.test(error)) return "cannot run the command";
  if (/exited unexpectedly/.test(error)) return "the process exited";
  if (/did not start/.test(error)) return "did not start";
  if (/secrets cannot be opened/.test(error)) return "secrets unreadable";
  return undefined;
}

/** Where a stdio child's stderr lines begin in a status's last error (the runner's start-failure.ts). */
const STDERR_MARK = "\nstderr (last lines):\n";

/** A status's last error without the stderr lines that may follow it (for a table's cell). */
export function errorSentence(error: string): string {
  return error.split(STDERR_MARK)[0] ?? error;
}

/**
 * A status's last error: its sentence, then — when a stdio child wrote to stderr — those last lines
 * as they were, in a block of their own (the runner scrubbed configured secret values from them and
 * keeps at most 1,000 characters, so the block needs no scrolling).
 */
export function LastError({ error }: { error: string | null | undefined }) {
  if (!error) return <>—</>;
  const [sentence, stderr] = error.split(STDERR_MARK);
  return (
    <>
      <span class="error-text">{sentence}</span>
      {stderr ? (
        <figure class="stderr">
          <figcaption>The child's stderr, last lines</figcaption>
          <pre>{stderr}</pre>
        </figure>
      ) : null}
    </>
  );
}

/**
 * A failure, in words. With `fields`, the API's messages about those fields are left to them (each
 * shown once, beside its field): when nothing else is wrong, the box only says so.
 */
export function Problem({ error, fields }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : undefined;
  const beside = api && fields ? api.errors.filter((item) => fields.some((field) => about(item, field))) : [];
  const rest = api ? api.errors.filter((item) => !beside.includes(item)).map(errorLine) : [];
  if (api && beside.length > 0 && rest.length === 0) {
    return (
      <div class="problem" role="alert">
        <strong>Nothing was saved: change the fields marked above.</strong>
      </div>
    );
  }
  return (
    <div class="problem" role="alert">
      <strong>{api ? api.detail : String((error as Error)?.message ?? error)}</strong>
      {api ? <code class="code">{api.code}</code> : null}
      {api && rest.length > 0 && !(rest.length === 1 && rest[0] === api.detail) ? (
        <ul>
          {rest.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Whether an API message is about form field `field` (`headers` holds `headers.X-Key`). */
function about(item: FieldError, field: string): boolean {
  return item.entry === undefined && (item.field === field || item.field.startsWith(`${field}.`));
}

/**
 * The API's messages about one field, told without its name (`url`: "Must be a URL."; `headers.X-Key`
 * under `headers`: "X-Key: Must not contain CR, LF or NUL."), or the whole detail when the problem's
 * code is the field's.
 */
export function fieldErrors(error: unknown, field: string, codes: string[] = []): string[] {
  if (!(error instanceof ApiError)) return [];
  if (codes.includes(error.code)) return [error.detail];
  return error.errors
    .filter((item) => about(item, field))
    .map((item) =>
      item.field === field ? item.message : `${item.field.slice(field.length + 1)}: ${item.message}`,
    );
}

/** A labelled form control with its help and the API's messages next to it. */
export function Field(props: {
  label: string;
  id: string;
  help?: string;
  errors?: string[];
  children: ComponentChildren;
}) {
  const errors = props.errors ?? [];
  return (
    <div class={`field${errors.length ? " invalid" : ""}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.help ? (
        <p class="help" id={`${props.id}-help`}>
          {props.help}
        </p>
      ) : null}
      {errors.map((message) => (
        <p class="field-error" id={`${props.id}-error`} key={message} role="alert">
          {message}
        </p>
      ))}
    </div>
  );
}

/** The API's messages about a group of fields (a fieldset's), each announced. */
export function FieldErrors({ errors }: { errors: string[] }) {
  return (
    <>
      {errors.map((message) => (
        <p class="field-error" key={message} role="alert">
          {message}
        </p>
      ))}
    </>
  );
}

/** A button that asks before it acts (a modal dialog, keyboard-usable: Esc cancels). */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  danger?: boolean;
  onConfirm: () => void | Promise<void>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" class={props.danger ? "danger" : ""} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.label}>
        <p>{props.question}</p>
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button
            type="button"
            class={props.danger ? "danger" : "primary"}
            onClick={async () => {
              dialog.current?.close();
              await props.onConfirm();
            }}
          >
            {props.confirmLabel ?? props.label}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** What a page shows when it has nothing yet, and what to do next. */
export function EmptyState(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="empty">
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/**
 * Data loaded now and again every `everyMs` (no reload needed), with the last error; `reload` loads
 * at once (after an action).
 */
export function usePolled<T>(load: () => Promise<T>, everyMs: number, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current();
        if (!stopped) {
          setData(value);
          setError(undefined);
        }
      } catch (caught) {
        if (!stopped) setError(caught);
      }
      if (!stopped && everyMs > 0) timer = setTimeout(run, everyMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [everyMs, tick, ...deps]);
  return { data, error, reload: () => setTick((n) => n + 1) };
}

/** A time as the admin reads it: relative when recent, else local date and time. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const ms = Date.now() - Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  return new Date(iso).toLocaleString();
}

/** A latency in ms, or a dash. */
export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : `${Math.round(value)} ms`;
}

/**
 * What a page's actions (revoke, delete, stop…) came to: `run` clears the last problem, runs one, and
 * keeps the sentence it answers as the notice, or its problem.
 */
export function useAction() {
  const [notice, setNotice] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const run = async (action: () => Promise<string>) => {
    setError(undefined);
    try {
      setNotice(await action());
    } catch (caught) {
      setError(caught);
    }
  };
  return { notice, error, setNotice, run };
}

/** A sentence about what just happened, announced politely. */
export function Notice({ text }: { text: string }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
}

/** A table that turns into cards on narrow screens, its columns named, the last one for actions. */
export function StackTable(props: { caption: string; columns: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * A form's submission: `onSubmit` keeps the page from loading, clears the last problem and runs
 * `work`, busy meanwhile; what it throws is kept as `error` (shown beside the fields).
 */
export function useSubmit(work: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await work();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  /** Forgets the last failure (the form was read again). */
  const reset = () => setError(undefined);
  return { busy, error, onSubmit, reset };
}

/**
 * A form's submit with its own checks first: `check` finds what the API would refuse (sentences by
 * field); with any, nothing is sent and each is shown beside its field ({@link errorsOf}) — else the
 * API's messages are.
 */
export function useCheckedSubmit(check: () => Record<string, string[]>, work: () => Promise<void>) {
  const [checked, setChecked] = useState<Record<string, string[]>>({});
  const submit = useSubmit(async () => {
    const problems = check();
    setChecked(problems);
    if (Object.keys(problems).length === 0) await work();
  });
  return {
    ...submit,
    /** True when the last submit stopped at the form's own checks. */
    stopped: Object.keys(checked).length > 0,
    /** What is said beside `field`: the form's own finding, else the API's messages (or detail, for `codes`). */
    errorsOf: (field: string, codes: string[] = []) =>
      checked[field] ?? fieldErrors(submit.error, field, codes),
  };
}

/** Said when a form's own checks stopped it: each finding is beside its field. */
export function NothingSent() {
  return (
    <div class="problem" role="alert">
      <strong>Nothing was sent: change the fields marked above.</strong>
    </div>
  );
}

/**
 * A list's filters: a search box and, when given, one choice (its "any" first, as the empty value),
 * each labelled.
 */
export function Filters(props: {
  text: string;
  onText: (text: string) => void;
  placeholder: string;
  /** A second filter, a choice among `choices` (none: the text filter alone). */
  choice?: {
    label: string;
    value: string;
    onChange: (choice: string) => void;
    anyLabel: string;
    choices: string[];
  };
}) {
  const { choice } = props;
  return (
    <div class="filters">
      <label>
        Filter
        <input
          type="search"
          value={props.text}
          placeholder={props.placeholder}
          onInput={(event) => props.onText(event.currentTarget.value)}
        />
      </label>
      {choice ? (
        <label>
          {choice.label}
          <select value={choice.value} onChange={(event) => choice.onChange(event.currentTarget.value)}>
            <option value="">{choice.anyLabel}</option>
            {choice.choices.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
      ) : null}
    </div>
  );
}

/**
 * A read-only value with a Copy button (the browser may refuse: then the value is selected to copy by
 * hand); `multiline` shows it in a text area as tall as its lines (a config file, say).
 */
export function CopyField(props: {
  id: string;
  label: string;
  value: string;
  focus?: boolean;
  multiline?: boolean;
}) {
  const input = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState<"copied" | "failed" | undefined>(undefined);
  useEffect(() => {
    if (!props.focus) return;
    input.current?.focus();
    input.current?.select();
  }, [props.focus]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied("copied");
    } catch {
      input.current?.select();
      setCopied("failed");
    }
  };
  const shared = {
    id: props.id,
    ref: input,
    class: "mono copy-value",
    readOnly: true,
    autoComplete: "off",
    spellcheck: false,
    value: props.value,
    onFocus: (event: { currentTarget: { select(): void } }) => event.currentTarget.select(),
  };
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <div class="copy-row">
        {props.multiline ? (
          <textarea {...shared} rows={props.value.split("\n").length} wrap="off" />
        ) : (
          <input {...shared} type="text" />
        )}
        <button type="button" onClick={copy}>
          Copy<span class="visually-hidden"> {props.label}</span>
        </button>
      </div>
      <p class="help" role="status">
        {copied === "copied"
          ? "Copied to the clipboard."
          : copied === "failed"
            ? "The browser refused to copy: the value is selected, copy it with Ctrl+C (⌘C)."
            : ""}
      </p>
    </div>
  );
}
