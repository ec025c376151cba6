/** The fields of a key's or mapping's tool policy (see policy-draft.ts for what they stand for). */
import type { PolicyDraft } from "./policy-draft";

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
      <label>
        <input
          type="checkbox"
          checked={draft.refuseDestructive}
          onChange={(event) => set({ refuseDestructive: event.currentTarget.checked })}
        />{" "}
        Refuse destructive tools (a tool that is not read-only is destructive unless it says otherwise)
      </label>
      <label>
        <input
          type="checkbox"
          checked={draft.refuseOpenWorld}
          onChange={(event) => set({ refuseOpenWorld: event.currentTarget.checked })}
        />{" "}
        Refuse open-world tools (open world unless a tool says otherwise)
      </label>
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
      {props.errors.map((message) => (
        <p class="field-error" key={message} role="alert">
          {message}
        </p>
      ))}
    </fieldset>
  );
}
