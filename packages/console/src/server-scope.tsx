/**
 * Which servers something may reach — a key, a user or group's OAuth access: every server, or the ones
 * checked in the list (named; the API binds them to the servers' ids), and the tool sets checked beside
 * them (the union is reached).
 */
import { FieldErrors } from "./components";
import type { Server, ToolSet } from "./types";

export function ServerScopeField(props: {
  /** The radio group's name (unique on the page). */
  name: string;
  legend: string;
  everyLabel: string;
  servers: Server[] | undefined;
  serversError: unknown;
  scoped: boolean;
  onScoped: (scoped: boolean) => void;
  chosen: string[];
  onChosen: (names: string[]) => void;
  help: string;
  errors: string[];
  /** The tool sets that may be chosen beside the servers (none offered when absent). */
  toolsets?: ToolSet[];
  chosenSets?: string[];
  onChosenSets?: (names: string[]) => void;
}) {
  const servers = props.servers ?? [];
  const sets = props.toolsets ?? [];
  const chosenSets = props.chosenSets ?? [];
  return (
    <fieldset class={`field${props.errors.length ? " invalid" : ""}`}>
      <legend>{props.legend}</legend>
      <label>
        <input
          type="radio"
          name={props.name}
          checked={!props.scoped}
          onChange={() => props.onScoped(false)}
        />{" "}
        {props.everyLabel}
      </label>
      <label>
        <input
          type="radio"
          name={props.name}
          checked={props.scoped}
          disabled={servers.length === 0 && sets.length === 0}
          onChange={() => props.onScoped(true)}
        />{" "}
        {sets.length ? "Only the servers and tool sets chosen below" : "Only the servers chosen below"}
      </label>
      {props.servers === undefined && !props.serversError ? (
        <p class="loading">Loading servers…</p>
      ) : servers.length === 0 ? (
        <p class="help">{props.serversError ? "The servers could not be loaded." : "No servers yet."}</p>
      ) : (
        <ChoiceList
          label="Servers"
          names={servers.map((server) => server.name)}
          disabled={!props.scoped}
          chosen={props.chosen}
          onChosen={props.onChosen}
        />
      )}
      {sets.length ? (
        <ChoiceList
          label="Tool sets"
          prefix="tool set "
          names={sets.map((set) => set.name)}
          disabled={!props.scoped}
          chosen={chosenSets}
          onChosen={(names) => props.onChosenSets?.(names)}
        />
      ) : null}
      <p class="help">{props.help}</p>
      <FieldErrors errors={props.errors} />
    </fieldset>
  );
}

/** Checkboxes for names, the checked ones `chosen`. */
function ChoiceList(props: {
  label: string;
  prefix?: string;
  names: string[];
  disabled: boolean;
  chosen: string[];
  onChosen: (names: string[]) => void;
}) {
  return (
    <ul class="checks" aria-label={props.label}>
      {props.names.map((name) => (
        <li key={name}>
          <label>
            <input
              type="checkbox"
              disabled={props.disabled}
              checked={props.chosen.includes(name)}
              onChange={(event) =>
                props.onChosen(
                  event.currentTarget.checked
                    ? [...props.chosen, name]
                    : props.chosen.filter((chosen) => chosen !== name),
                )
              }
            />{" "}
            {props.prefix ?? ""}
            {name}
          </label>
        </li>
      ))}
    </ul>
  );
}
