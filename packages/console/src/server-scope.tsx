/**
 * Which servers something may reach — a key, a user or group's OAuth access: every server, or the ones
 * checked in the list (named; the API binds them to the servers' ids).
 */
import type { Server } from "./types";

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
}) {
  const servers = props.servers ?? [];
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
          disabled={servers.length === 0}
          onChange={() => props.onScoped(true)}
        />{" "}
        Only the servers chosen below
      </label>
      {props.servers === undefined && !props.serversError ? (
        <p class="loading">Loading servers…</p>
      ) : servers.length === 0 ? (
        <p class="help">{props.serversError ? "The servers could not be loaded." : "No servers yet."}</p>
      ) : (
        <ul class="checks" aria-label="Servers">
          {servers.map((server) => (
            <li key={server.id}>
              <label>
                <input
                  type="checkbox"
                  disabled={!props.scoped}
                  checked={props.chosen.includes(server.name)}
                  onChange={(event) =>
                    props.onChosen(
                      event.currentTarget.checked
                        ? [...props.chosen, server.name]
                        : props.chosen.filter((name) => name !== server.name),
                    )
                  }
                />{" "}
                {server.name}
              </label>
            </li>
          ))}
        </ul>
      )}
      <p class="help">{props.help}</p>
      {props.errors.map((message) => (
        <p class="field-error" key={message} role="alert">
          {message}
        </p>
      ))}
    </fieldset>
  );
}
