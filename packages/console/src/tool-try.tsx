/**
 * "Try it": a form generated from a tool's input schema (string → text, number/integer → number,
 * boolean → checkbox, enum → select, anything else → JSON checked before sending; required fields
 * marked), which calls `POST /v1/tools/{callName}/call` and shows the result or the API's problem.
 */
import { useState } from "preact/hooks";
import { request, seg } from "./api";
import { Field, Problem } from "./components";
import { ToolResult } from "./tool-result";
import {
  buildArguments,
  checkedByDefault,
  type FormValues,
  type Param,
  paramsOf,
  parseArgumentsJson,
} from "./tool-schema";
import type { CallResult, Tool } from "./types";

type Outcome = { result: CallResult; elapsedMs: number } | { error: unknown };

export function TryIt({ tool, callName, idBase }: { tool: Tool; callName: string; idBase: string }) {
  const params = paramsOf(tool.inputSchema);
  const [values, setValues] = useState<FormValues>({});
  const [rawArgs, setRawArgs] = useState("{}");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined);
  const set = (name: string, value: string | boolean) => setValues({ ...values, [name]: value });

  const submit = async (event: Event) => {
    event.preventDefault();
    const built = params ? buildArguments(params, values) : parseArgumentsJson(rawArgs);
    if (!built.ok) {
      setErrors("errors" in built ? built.errors : { "": built.error });
      return;
    }
    setErrors({});
    setBusy(true);
    const started = performance.now();
    try {
      const result = await request<CallResult>("POST", `/v1/tools/${seg(callName)}/call`, {
        arguments: built.arguments,
      });
      setOutcome({ result, elapsedMs: performance.now() - started });
    } catch (error) {
      setOutcome({ error });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="try-it" noValidate onSubmit={submit} aria-label={`Try ${callName}`}>
      {params === undefined ? (
        <Field
          label="Arguments (JSON object)"
          id={`${idBase}-args`}
          help="This tool's schema is not a plain list of parameters: type its arguments as JSON."
          errors={errors[""] ? [errors[""]] : []}
        >
          <textarea
            id={`${idBase}-args`}
            class="mono json-input"
            spellcheck={false}
            value={rawArgs}
            aria-describedby={`${idBase}-args-help`}
            aria-invalid={errors[""] ? true : undefined}
            onInput={(e) => setRawArgs(e.currentTarget.value)}
          />
        </Field>
      ) : params.length === 0 ? (
        <p class="help">This tool takes no arguments.</p>
      ) : (
        params.map((param, index) => (
          <ParamField
            key={param.name}
            param={param}
            id={`${idBase}-p${index}`}
            value={values[param.name]}
            error={errors[param.name]}
            onChange={(value) => set(param.name, value)}
          />
        ))
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Calling…" : "Call"}
        </button>
        {Object.keys(errors).length > 0 ? (
          <span class="field-error" role="alert">
            Fix the marked fields first.
          </span>
        ) : null}
      </div>
      <div class="result-area" aria-live="polite">
        {outcome && "result" in outcome ? (
          <ToolResult result={outcome.result} callName={callName} elapsedMs={outcome.elapsedMs} />
        ) : outcome ? (
          <Problem error={outcome.error} />
        ) : null}
      </div>
    </form>
  );
}

/** One parameter's labelled control, its description as help, and its message when it is wrong. */
function ParamField(props: {
  param: Param;
  id: string;
  value: string | boolean | undefined;
  error: string | undefined;
  onChange: (value: string | boolean) => void;
}) {
  const { param, id, value, onChange } = props;
  const { schema } = param;
  const help = [schema.description, hint(param)].filter(Boolean).join(" ");
  const describedBy = [help ? `${id}-help` : "", props.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const common = {
    id,
    required: param.required,
    "aria-invalid": props.error ? true : undefined,
    "aria-describedby": describedBy || undefined,
  };
  const text = typeof value === "string" ? value : "";
  const placeholder = schema.default === undefined ? undefined : `default: ${JSON.stringify(schema.default)}`;
  return (
    <Field
      label={param.required ? `${param.name} (required)` : param.name}
      id={id}
      {...(help ? { help } : {})}
      errors={props.error ? [props.error] : []}
    >
      {param.kind === "boolean" ? (
        <input
          {...common}
          type="checkbox"
          checked={typeof value === "boolean" ? value : checkedByDefault(schema)}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
      ) : param.kind === "enum" ? (
        <select {...common} value={text} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">{param.required ? "Choose…" : "(not set)"}</option>
          {(schema.enum ?? []).map((option, index) => (
            <option key={index} value={String(index)}>
              {typeof option === "string" ? option : JSON.stringify(option)}
            </option>
          ))}
        </select>
      ) : param.kind === "json" ? (
        <textarea
          {...common}
          class="mono json-input"
          spellcheck={false}
          value={text}
          placeholder={placeholder ?? "JSON"}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      ) : (
        <input
          {...common}
          type={param.kind === "text" ? "text" : "number"}
          inputMode={param.kind === "text" ? undefined : param.kind === "integer" ? "numeric" : "decimal"}
          step={param.kind === "integer" ? 1 : "any"}
          min={bounds(param).minimum}
          max={bounds(param).maximum}
          value={text}
          placeholder={placeholder}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** What a control does not show by itself: the JSON type expected, and the bounds of a number. */
function hint(param: Param): string {
  if (param.kind === "json") return "Type a JSON value.";
  const { minimum, maximum } = bounds(param);
  const words = [
    minimum === undefined ? "" : `at least ${minimum}`,
    maximum === undefined ? "" : `at most ${maximum}`,
  ].filter(Boolean);
  return words.length ? `${words.join(", ")}.` : "";
}

/** A number's bounds; the safe-integer limits some generators write for "any integer" are none. */
function bounds({ schema }: Param): { minimum?: number; maximum?: number } {
  const real = (bound: number | undefined) =>
    bound !== undefined && Math.abs(bound) < Number.MAX_SAFE_INTEGER ? bound : undefined;
  return { minimum: real(schema.minimum), maximum: real(schema.maximum) };
}
