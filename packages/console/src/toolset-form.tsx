/**
 * A tool set's form: its name and description, tools picked from the live catalogue (grouped by
 * server, with a filter), rules (a server, annotation hints, a name glob), and per-tool overrides of
 * name and description. Creates (`POST /v1/toolsets`) or replaces (`PUT /v1/toolsets/{name}`).
 */
import { useState } from "preact/hooks";
import { request, seg } from "./api";
import { Field, FieldErrors, NothingSent, Problem, useCheckedSubmit } from "./components";
import { toolsetProblems } from "./form-checks";
import type { AnnotationHint, CatalogTool, ToolOverride, ToolRule, ToolSet } from "./types";

/** Each annotation hint in words. */
export const HINT_LABELS: Record<AnnotationHint, string> = {
  readOnlyHint: "Read-only",
  destructiveHint: "Destructive",
  idempotentHint: "Idempotent",
  openWorldHint: "Open world",
};
const HINTS = Object.keys(HINT_LABELS) as AnnotationHint[];

/** A rule as the form edits it: a hint is "" (any), "true" or "false". */
interface RuleDraft {
  server: string;
  hints: Record<AnnotationHint, "" | "true" | "false">;
  glob: string;
}

const NO_HINTS: RuleDraft["hints"] = {
  readOnlyHint: "",
  destructiveHint: "",
  idempotentHint: "",
  openWorldHint: "",
};

function ruleDraft(rule: ToolRule): RuleDraft {
  const hints = { ...NO_HINTS };
  for (const hint of HINTS) {
    const value = rule.annotations?.[hint];
    if (value !== undefined) hints[hint] = value ? "true" : "false";
  }
  return { server: rule.server ?? "", hints, glob: rule.glob ?? "" };
}

function ruleOf(draft: RuleDraft): ToolRule {
  const annotations = Object.fromEntries(
    HINTS.filter((hint) => draft.hints[hint]).map((hint) => [hint, draft.hints[hint] === "true"]),
  );
  return {
    ...(draft.server ? { server: draft.server } : {}),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(draft.glob.trim() ? { glob: draft.glob.trim() } : {}),
  };
}

/** Overrides left with a name or description (or annotations kept from the stored set). */
function overridesOf(overrides: Record<string, ToolOverride>): Record<string, ToolOverride> {
  const kept: Record<string, ToolOverride> = {};
  for (const [tool, override] of Object.entries(overrides)) {
    const entry: ToolOverride = {
      ...(override.name?.trim() ? { name: override.name.trim() } : {}),
      ...(override.description?.trim() ? { description: override.description.trim() } : {}),
      ...(override.annotations ? { annotations: override.annotations } : {}),
    };
    if (Object.keys(entry).length) kept[tool] = entry;
  }
  return kept;
}

export function ToolSetForm(props: {
  /** The stored set when editing; a new one otherwise. */
  editing?: ToolSet;
  catalogue: CatalogTool[] | undefined;
  catalogueError: unknown;
  onSaved: (saved: ToolSet) => void;
}) {
  const editing = props.editing;
  const [name, setName] = useState(editing?.name ?? "");
  const [description, setDescription] = useState(editing?.description ?? "");
  const [picked, setPicked] = useState<string[]>(editing?.tools ?? []);
  const [rules, setRules] = useState<RuleDraft[]>((editing?.rules ?? []).map(ruleDraft));
  const [overrides, setOverrides] = useState<Record<string, ToolOverride>>(editing?.overrides ?? {});
  const submit = useCheckedSubmit(
    () =>
      toolsetProblems(
        editing ? undefined : name,
        Object.fromEntries(picked.map((tool) => [tool, overrides[tool]?.name])),
      ),
    async () => {
      const body = {
        ...(description.trim() ? { description: description.trim() } : {}),
        tools: picked,
        // A rule row left empty is no rule.
        rules: rules.map(ruleOf).filter((rule) => Object.keys(rule).length > 0),
        overrides: overridesOf(overrides),
      };
      const saved = editing
        ? await request<ToolSet>("PUT", `/v1/toolsets/${seg(editing.name)}`, body)
        : await request<ToolSet>("POST", "/v1/toolsets", { name: name.trim(), ...body });
      if (!editing) {
        setName("");
        setDescription("");
        setPicked([]);
        setRules([]);
        setOverrides({});
      }
      props.onSaved(saved);
    },
  );
  const nameErrors = submit.errorsOf("name", ["toolset.exists"]);
  const overrideErrors = (tool: string, field: "name" | "description") =>
    submit.errorsOf(`overrides.${tool}.${field}`);
  const toolErrors = [
    ...submit.errorsOf("tools", ["toolset.unknown_server", "toolset.invalid"]),
    // An override's name and description are told beside them; anything else about it lands here.
    ...submit
      .errorsOf("overrides")
      .filter(
        (said) =>
          !picked.some((tool) => said.startsWith(`${tool}.name:`) || said.startsWith(`${tool}.description:`)),
      ),
  ];
  const ruleErrors = submit.errorsOf("rules");
  const servers = [...new Set((props.catalogue ?? []).map((tool) => tool.server))].sort();
  const setRule = (index: number, changes: Partial<RuleDraft>) =>
    setRules(rules.map((rule, i) => (i === index ? { ...rule, ...changes } : rule)));
  const formId = editing ? "edit-set" : "new-set";

  return (
    <form class="panel" aria-labelledby={`${formId}-title`} noValidate onSubmit={submit.onSubmit}>
      <h2 id={`${formId}-title`}>{editing ? `Edit ${editing.name}` : "Create a tool set"}</h2>
      {editing ? null : (
        <Field
          label="Name"
          id={`${formId}-name`}
          help="Letters, digits, - and _: the endpoint is /mcp/sets/<name>."
          errors={nameErrors}
        >
          <input
            id={`${formId}-name`}
            type="text"
            required
            maxLength={32}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </Field>
      )}
      <Field label="Description" id={`${formId}-description`} errors={submit.errorsOf("description")}>
        <input
          id={`${formId}-description`}
          type="text"
          maxLength={1024}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
      </Field>
      <ToolPicker
        catalogue={props.catalogue}
        catalogueError={props.catalogueError}
        chosen={picked}
        onChosen={setPicked}
        errors={toolErrors}
      />
      <fieldset class={`field${ruleErrors.length ? " invalid" : ""}`}>
        <legend>Rules</legend>
        <p class="help">
          A rule adds every tool that matches all it names: a server, the hints a tool declares (read with the
          MCP defaults), a name pattern such as <code>docs__read_*</code>. Tools a server adds later match
          too.
        </p>
        {rules.map((rule, index) => (
          <div class="rule-row" key={index} data-rule={index + 1}>
            <label>
              Rule {index + 1} server
              <select
                value={rule.server}
                onChange={(event) => setRule(index, { server: event.currentTarget.value })}
              >
                <option value="">any server</option>
                {[...new Set([...servers, ...(rule.server ? [rule.server] : [])])].map((server) => (
                  <option key={server} value={server}>
                    {server}
                  </option>
                ))}
              </select>
            </label>
            {HINTS.map((hint) => (
              <label key={hint}>
                Rule {index + 1} {HINT_LABELS[hint].toLowerCase()}
                <select
                  value={rule.hints[hint]}
                  onChange={(event) =>
                    setRule(index, {
                      hints: { ...rule.hints, [hint]: event.currentTarget.value as "" | "true" | "false" },
                    })
                  }
                >
                  <option value="">any</option>
                  <option value="true">yes</option>
                  <option value="false">no</option>
                </select>
              </label>
            ))}
            <label>
              Rule {index + 1} name glob
              <input
                type="text"
                maxLength={200}
                placeholder="e.g. docs__read_*"
                value={rule.glob}
                onInput={(event) => setRule(index, { glob: event.currentTarget.value })}
              />
            </label>
            <button type="button" onClick={() => setRules(rules.filter((_, i) => i !== index))}>
              Remove rule {index + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          class="align-start"
          onClick={() => setRules([...rules, { server: "", hints: { ...NO_HINTS }, glob: "" }])}
        >
          Add a rule
        </button>
        <FieldErrors errors={ruleErrors} />
      </fieldset>
      {picked.length > 0 ? (
        <fieldset class="field">
          <legend>Overrides</legend>
          <p class="help">
            What this set's clients see instead of the server's name or description (e.g. a shorter
            description for a noisy tool). Empty keeps the server's.
          </p>
          {picked.map((tool) => (
            <details
              key={tool}
              data-override={tool}
              open={Boolean(overrides[tool]?.name || overrides[tool]?.description)}
            >
              <summary>
                Override <code>{tool}</code>
              </summary>
              {(["name", "description"] as const).map((field) => (
                <Field
                  key={field}
                  label={`${tool} ${field}`}
                  id={`${formId}-${tool}-${field}`}
                  errors={overrideErrors(tool, field)}
                >
                  <input
                    id={`${formId}-${tool}-${field}`}
                    type="text"
                    maxLength={field === "name" ? 64 : 4096}
                    value={overrides[tool]?.[field] ?? ""}
                    onInput={(event) =>
                      setOverrides({
                        ...overrides,
                        [tool]: { ...overrides[tool], [field]: event.currentTarget.value },
                      })
                    }
                  />
                </Field>
              ))}
            </details>
          ))}
        </fieldset>
      ) : null}
      {submit.stopped ? (
        <NothingSent />
      ) : (
        <Problem
          error={
            nameErrors.length ||
            toolErrors.length ||
            ruleErrors.length ||
            submit.errorsOf("description").length ||
            submit.errorsOf("overrides").length
              ? undefined
              : submit.error
          }
        />
      )}
      <button type="submit" class="primary" disabled={submit.busy}>
        {editing ? "Save tool set" : "Create tool set"}
      </button>
    </form>
  );
}

/** Checkboxes over the live catalogue, grouped by server, with a filter; chosen tools no server offers now stay listed. */
function ToolPicker(props: {
  catalogue: CatalogTool[] | undefined;
  catalogueError: unknown;
  chosen: string[];
  onChosen: (names: string[]) => void;
  errors: string[];
}) {
  const [filter, setFilter] = useState("");
  const catalogue = props.catalogue ?? [];
  const needle = filter.trim().toLowerCase();
  const shown = catalogue.filter(
    (tool) =>
      !needle ||
      tool.name.toLowerCase().includes(needle) ||
      (tool.description ?? "").toLowerCase().includes(needle),
  );
  const servers = [...new Set(shown.map((tool) => tool.server))].sort();
  const offered = new Set(catalogue.map((tool) => tool.name));
  const absent = props.chosen.filter((name) => !offered.has(name));
  const toggle = (name: string, checked: boolean) =>
    props.onChosen(checked ? [...props.chosen, name] : props.chosen.filter((chosen) => chosen !== name));
  const check = (name: string, title?: string) => (
    <li key={name}>
      <label title={title}>
        <input
          type="checkbox"
          checked={props.chosen.includes(name)}
          onChange={(e) => toggle(name, e.currentTarget.checked)}
        />{" "}
        <span class="mono">{name}</span>
      </label>
    </li>
  );
  return (
    <fieldset class={`field${props.errors.length ? " invalid" : ""}`} data-picker>
      <legend>Tools</legend>
      <label>
        Filter tools
        <input
          type="search"
          value={filter}
          placeholder="name or description"
          onInput={(event) => setFilter(event.currentTarget.value)}
        />
      </label>
      <p class="help">{props.chosen.length} chosen.</p>
      {props.catalogue === undefined && !props.catalogueError ? (
        <p class="loading">Loading the catalogue…</p>
      ) : catalogue.length === 0 ? (
        <p class="help">
          {props.catalogueError
            ? "The catalogue could not be loaded."
            : "No tools yet: connect a server first."}
        </p>
      ) : (
        <div class="picker">
          {servers.map((server) => (
            <div key={server} data-server={server}>
              <h3>{server}</h3>
              <ul class="checks" aria-label={`Tools of ${server}`}>
                {shown
                  .filter((tool) => tool.server === server)
                  .map((tool) => check(tool.name, tool.description))}
              </ul>
            </div>
          ))}
          {servers.length === 0 ? <p>No tool matches the filter.</p> : null}
        </div>
      )}
      {absent.length > 0 ? (
        <>
          <h3>Chosen, not offered now</h3>
          <ul class="checks" aria-label="Chosen tools no connected server offers now">
            {absent.map((name) => check(name))}
          </ul>
        </>
      ) : null}
      <FieldErrors errors={props.errors} />
    </fieldset>
  );
}
