/**
 * Access: which servers a user or group reaches when they sign in with OAuth (`user:<name>`,
 * `group:<name>`) — listed, set (replacing the mapping) and removed. A user reaches the union of their
 * own mapping and their groups'; with none, sign-in grants nothing.
 */
import { useState } from "preact/hooks";
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
import { scopeProblems, subjectProblems } from "../form-checks";
import { NO_POLICY, type PolicyDraft, policyOf, toolScopeText } from "../policy-draft";
import { ServerScopeField } from "../server-scope";
import { ToolPolicyField } from "../tool-policy";
import type { AccessMapping, Server, ToolScope, ToolSet } from "../types";
import { loadServers } from "./servers";
import { loadToolSets } from "./toolsets";

export function AccessPage() {
  const mappings = usePolled(() => request<{ access: AccessMapping[] }>("GET", "/v1/access"), 0);
  const servers = usePolled(loadServers, 0);
  const toolsets = usePolled(loadToolSets, 0);
  const action = useAction();
  const list = mappings.data?.access.slice().sort((a, b) => (a.subject < b.subject ? -1 : 1));
  const remove = (mapping: AccessMapping) =>
    action.run(async () => {
      await request("DELETE", `/v1/access/${seg(mapping.subject)}`);
      mappings.reload();
      return `${mapping.subject} no longer reaches any server by sign-in.`;
    });

  return (
    <section>
      <h1>Access</h1>
      <p class="help intro">
        Who reaches which servers after signing in with OAuth (MCP clients that sign in instead of using a
        key). A user reaches their own servers and their groups'; with no mapping, sign-in grants nothing.
      </p>
      <Notice text={action.notice} />
      <Problem error={action.error ?? mappings.error} />
      {!list ? (
        mappings.error ? null : (
          <p class="loading">Loading access…</p>
        )
      ) : list.length === 0 ? (
        <EmptyState title="No one has access yet">
          <p>Map a user or a group to servers below; until then, signing in grants nothing.</p>
        </EmptyState>
      ) : (
        <StackTable
          caption="Users and groups and the servers they reach"
          columns={["Who", "Servers", "Updated"]}
        >
          {list.map((mapping) => (
            <tr key={mapping.subject} data-subject={mapping.subject}>
              <th scope="row" class="mono">
                {mapping.subject}
              </th>
              <td>
                <span class="cell-label">Servers: </span>
                {reachText(mapping, "none (deleted)")}
              </td>
              <td>
                <span class="cell-label">Updated: </span>
                {when(mapping.updatedAt)}
              </td>
              <td class="row-actions">
                <ConfirmButton
                  label={`Remove ${mapping.subject}`}
                  danger
                  question={`Remove ${mapping.subject}'s access? Their next sign-in grants nothing; tokens already issued expire within 10 minutes.`}
                  confirmLabel="Remove"
                  onConfirm={() => remove(mapping)}
                />
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      <MappingForm
        servers={servers.data}
        serversError={servers.error}
        toolsets={toolsets.data}
        onSaved={(saved) => {
          mappings.reload();
          action.setNotice(`${saved.subject} now reaches ${reachText(saved)}.`);
        }}
      />
    </section>
  );
}

/** Sets one user's or group's servers (replacing what it had). */
function MappingForm(props: {
  servers: Server[] | undefined;
  serversError: unknown;
  toolsets: ToolSet[] | undefined;
  onSaved: (saved: AccessMapping) => void;
}) {
  const [kind, setKind] = useState<"user" | "group">("user");
  const [name, setName] = useState("");
  const [scoped, setScoped] = useState(true);
  const [chosen, setChosen] = useState<string[]>([]);
  const [chosenSets, setChosenSets] = useState<string[]>([]);
  const [policy, setPolicy] = useState<PolicyDraft>(NO_POLICY);
  const submit = useCheckedSubmit(
    () => ({
      ...subjectProblems(name),
      ...scopeProblems(scoped, chosen.length + chosenSets.length, "them reach"),
    }),
    async () => {
      const toolPolicy = policyOf(policy);
      const saved = await request<AccessMapping>("PUT", `/v1/access/${seg(`${kind}:${name.trim()}`)}`, {
        servers: scoped ? chosen : null,
        ...(scoped && chosenSets.length ? { toolsets: chosenSets } : {}),
        ...(toolPolicy ? { toolPolicy } : {}),
      });
      setName("");
      setChosen([]);
      setChosenSets([]);
      setPolicy(NO_POLICY);
      props.onSaved(saved);
    },
  );
  const serverErrors = [
    ...submit.errorsOf("servers", ["access.unknown_server"]),
    ...submit.errorsOf("toolsets", ["access.unknown_toolset"]),
  ];
  const policyErrors = submit.errorsOf("toolPolicy");
  const nameErrors = submit.errorsOf("subject");

  return (
    <form class="panel" aria-labelledby="access-form-title" noValidate onSubmit={submit.onSubmit}>
      <h2 id="access-form-title">Give access</h2>
      <Field label="User or group" id="access-kind">
        <select
          id="access-kind"
          value={kind}
          onChange={(event) => setKind(event.currentTarget.value as "user" | "group")}
        >
          <option value="user">user</option>
          <option value="group">group</option>
        </select>
      </Field>
      <Field
        label="Name"
        id="access-name"
        help="As the sign-in names them, e.g. ada or engineering."
        errors={nameErrors}
      >
        <input
          id="access-name"
          type="text"
          required
          maxLength={255}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </Field>
      <ServerScopeField
        name="access-scope"
        legend="Servers they reach"
        everyLabel="Every server (servers added later too)"
        servers={props.servers}
        serversError={props.serversError}
        scoped={scoped}
        onScoped={setScoped}
        chosen={chosen}
        onChosen={setChosen}
        help="Bound to the servers themselves: renaming a server keeps its access. A tool set adds its tools to the servers chosen."
        errors={serverErrors}
        toolsets={props.toolsets}
        chosenSets={chosenSets}
        onChosenSets={setChosenSets}
      />
      <ToolPolicyField id="access-policy" draft={policy} onDraft={setPolicy} errors={policyErrors} />
      {submit.stopped ? (
        <NothingSent />
      ) : (
        <Problem
          error={serverErrors.length || nameErrors.length || policyErrors.length ? undefined : submit.error}
        />
      )}
      <button type="submit" class="primary" disabled={submit.busy}>
        Save access
      </button>
    </form>
  );
}

/** What a mapping reaches, in words: every server, or the servers named, with its tool sets. */
function reachText(mapping: AccessMapping, noServer = "no server"): string {
  const servers = mapping.servers === null ? "every server" : mapping.servers.join(", ");
  const sets = toolScopeText(mapping as ToolScope);
  return [servers, sets].filter(Boolean).join(" · ") || noServer;
}
