/** The fields of a key's or mapping's tool policy (see policy-draft.ts for what they stand for). */
import { FieldErrors } from "./components";
import type { PolicyDraft } from "./policy-draft";

/** The refusals offered, in words (the MCP defaults said: most tools declare neither hint). */
const REFUSALS: Array<{ field: "refuseDestructive" | "refuseOpenWorld"; label: string }> = [
  {
    field: "refuseDestructive",
    label: "Refuse destructive tools (a tool that is not read-only is destructive unless it says otherwise)",
  },
  { field: "refuseOpenWorld", label: "Refuse open-world tools (open world unless a tool says otherwise)" },
];

/** The policy's fields, labelled, with the API's messages about `toolPolicy`. */
export function ToolPolicyField(props: {
  id: string;
  draft: PolicyDraft;
  onDraft: (draft: PolicyDraft) => void;
  errors: string[];
}) {
  const { draft, onDraft, id } = props;
  const set = (changes: Partial<PolicyDraft>) => onDraft({ ...draft, ...changes });
  return (
    <fieldset class={`field${props.errors.length ? " invalid" : ""}`}>
      <legend>Tool policy</legend>
      <label for={`${id}-allow`}>Allowed tools</label>
      <textarea
        id={`${id}-allow`}
        class="names"
        rows={2}
        maxLength={4000}
        placeholder="docs__search, files__read_*"
        aria-describedby={`${id}-allow-help`}
        value={draft.allow}
        onInput={(event) => set({ allow: event.currentTarget.value })}
      />
      <p class="help" id={`${id}-allow-help`}>
        Names (<code>server__tool</code>) or globs, one a line or comma-separated; empty allows every tool its
        scope reaches.
      </p>
      {REFUSALS.map(({ field, label }) => (
        <label key={field}>
          <input
            type="checkbox"
            checked={draft[field]}
            onChange={(event) => set({ [field]: event.currentTarget.checked })}
          />{" "}
          {label}
        </label>
      ))}
      <label for={`${id}-except`}>Exempt from the refusal</label>
      <textarea
        id={`${id}-except`}
        class="names"
        rows={2}
        maxLength={4000}
        disabled={!draft.refuseDestructive && !draft.refuseOpenWorld}
        placeholder="files__delete"
        value={draft.except}
        onInput={(event) => set({ except: event.currentTarget.value })}
      />
      <FieldErrors errors={props.errors} />
    </fieldset>
  );
}
