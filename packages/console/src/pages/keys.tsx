/**
 * Client API keys: the list (name, scope, owner, created), a create form with an optional scope (servers,
 * tool sets), tool policy and owner, and revoke (confirmed). A new key is shown once, in a read-only
 * field with a Copy button; dismissing it (or leaving the page) drops it from the page and from the
 * component's state — the API keeps only its hash, so nothing can show it again.
 */
import { useRef, useState } from "preact/hooks";
import { mcpUrl, request, seg } from "../api";
import {
  ConfirmButton,
  CopyField,
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
import { ConnectClients } from "../connect";
import { keyProblems, scopeProblems } from "../form-checks";
import { NO_POLICY, type PolicyDraft, policyOf, toolScopeText } from "../policy-draft";
import { ServerScopeField } from "../server-scope";
import { ToolPolicyField } from "../tool-policy";
import type { ApiKey, NewApiKey, Server, ToolScope, ToolSet } from "../types";
import { loadServers } from "./servers";
import { loadToolSets } from "./toolsets";

/** A key just created: the one moment its material is in the page. */
interface Revealed {
  name: string;
  key: string;
}

export function KeysPage() {
  const keys = usePolled(() => request<{ keys: ApiKey[] }>("GET", "/v1/keys"), 0);
  const servers = usePolled(loadServers, 0);
  const toolsets = usePolled(loadToolSets, 0);
  const [revealed, setRevealed] = useState<Revealed | undefined>(undefined);
  const action = useAction();
  const heading = useRef<HTMLHeadingElement>(null);

  const list = keys.data?.keys.slice().sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  const revoke = (key: ApiKey) =>
    action.run(async () => {
      await request("DELETE", `/v1/keys/${seg(key.id)}`);
      keys.reload();
      return `Revoked ${key.name}: clients using it are refused within seconds.`;
    });

  return (
    <section>
      <h1 ref={heading} tabIndex={-1}>
        API keys
      </h1>
      <p class="help intro">
        Keys let MCP clients and scripts use the gateway's tools (<code>/mcp</code>, <code>/v1/tools</code>).
        A key scoped to servers or tool sets sees only their tools, and its tool policy may refuse some of
        those. A key's owner is the person who signs in to connect it to a server where each caller uses their
        own account. A new key comes with each client's config, the key filled in; a server's page has its
        own.
      </p>
      <CopyField id="keys-mcp-url" label="MCP URL (every server a key may use)" value={mcpUrl()} />
      {revealed ? (
        <RevealedKey
          revealed={revealed}
          onDismiss={() => {
            setRevealed(undefined);
            heading.current?.focus();
          }}
        />
      ) : null}
      <Notice text={action.notice} />
      <Problem error={action.error ?? keys.error} />
      {!list ? (
        keys.error ? null : (
          <p class="loading">Loading keys…</p>
        )
      ) : list.length === 0 ? (
        <EmptyState title="No API keys yet">
          <p>Create a key below and give it to a client: it is shown once, when it is created.</p>
        </EmptyState>
      ) : (
        <StackTable caption="Client API keys" columns={["Name", "Scope", "Owner", "Created"]}>
          {list.map((key) => (
            <tr key={key.id} data-key={key.name}>
              <th scope="row">{key.name}</th>
              <td data-col="scope">
                <span class="cell-label">Scope: </span>
                {scopeText(key)}
                {toolScopeText(key as ToolScope) ? <> · {toolScopeText(key as ToolScope)}</> : null}
              </td>
              <td data-col="owner">
                <span class="cell-label">Owner: </span>
                {key.owner ?? "none"}
              </td>
              <td>
                <span class="cell-label">Created: </span>
                {when(key.createdAt)}
              </td>
              <td class="row-actions">
                <ConfirmButton
                  label="Revoke"
                  danger
                  question={`Revoke the key ${key.name}? Clients using it are refused from then on; this cannot be undone.`}
                  onConfirm={() => revoke(key)}
                />
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      <CreateKeyForm
        servers={servers.data}
        serversError={servers.error}
        toolsets={toolsets.data}
        onCreated={(created) => {
          action.setNotice("");
          setRevealed({ name: created.name, key: created.key });
          keys.reload();
        }}
      />
    </section>
  );
}

/** "every server", or the names of the servers a key may use. */
function scopeText(key: ApiKey): string {
  if (key.servers === null) return "every server";
  if (key.servers.length === 0) return "no server (its servers were deleted)";
  return key.servers.join(", ");
}

/** The new key, once: read-only, selectable, copyable; gone when dismissed. */
function RevealedKey(props: { revealed: Revealed; onDismiss: () => void }) {
  return (
    <section class="reveal" aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key: {props.revealed.name}</h2>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Only a hash of it is stored; if it is lost,
        revoke it and create another.
      </p>
      <CopyField id="new-key" label="API key" value={props.revealed.key} focus />
      <ConnectClients id="new-key-connect" keyValue={props.revealed.key} />
      <button type="button" class="primary" onClick={props.onDismiss}>
        Done — hide the key
      </button>
    </section>
  );
}

/** Name, scope and owner of a new key: every server, or the servers chosen from the list. */
function CreateKeyForm(props: {
  servers: Server[] | undefined;
  serversError: unknown;
  toolsets: ToolSet[] | undefined;
  onCreated: (created: NewApiKey) => void;
}) {
  const [name, setName] = useState("");
  const [scoped, setScoped] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const [chosenSets, setChosenSets] = useState<string[]>([]);
  const [policy, setPolicy] = useState<PolicyDraft>(NO_POLICY);
  const [ownerKind, setOwnerKind] = useState<"" | "user" | "group">("");
  const [ownerName, setOwnerName] = useState("");
  const submit = useCheckedSubmit(
    () => ({
      ...keyProblems(name, ownerKind ? ownerName : undefined),
      ...scopeProblems(scoped, chosen.length + chosenSets.length, "the key use"),
    }),
    async () => {
      const toolPolicy = policyOf(policy);
      const created = await request<NewApiKey>("POST", "/v1/keys", {
        name: name.trim(),
        ...(scoped ? { servers: chosen } : {}),
        ...(scoped && chosenSets.length ? { toolsets: chosenSets } : {}),
        ...(toolPolicy ? { toolPolicy } : {}),
        ...(ownerKind ? { owner: `${ownerKind}:${ownerName.trim()}` } : {}),
      });
      setName("");
      setOwnerKind("");
      setOwnerName("");
      setScoped(false);
      setChosen([]);
      setChosenSets([]);
      setPolicy(NO_POLICY);
      props.onCreated(created);
    },
  );
  const nameErrors = submit.errorsOf("name");
  const scopeErrors = [
    ...submit.errorsOf("servers", ["key.unknown_server"]),
    ...submit.errorsOf("toolsets", ["key.unknown_toolset"]),
  ];
  const policyErrors = submit.errorsOf("toolPolicy");
  const ownerErrors = submit.errorsOf("owner");

  return (
    <form class="panel" aria-labelledby="create-key-title" noValidate onSubmit={submit.onSubmit}>
      <h2 id="create-key-title">Create a key</h2>
      <Field
        label="Name"
        id="key-name"
        help="Who or what uses it, e.g. “laptop” or “ci”."
        errors={nameErrors}
      >
        <input
          id="key-name"
          type="text"
          required
          maxLength={128}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </Field>
      <ServerScopeField
        name="key-scope"
        legend="Servers it may use"
        everyLabel="Every server (servers added later too)"
        servers={props.servers}
        serversError={props.serversError}
        scoped={scoped}
        onScoped={setScoped}
        chosen={chosen}
        onChosen={setChosen}
        help="A scope is bound to the servers themselves: renaming a server keeps its keys. A tool set adds its tools to the servers chosen."
        errors={scopeErrors}
        toolsets={props.toolsets}
        chosenSets={chosenSets}
        onChosenSets={setChosenSets}
      />
      <ToolPolicyField id="key-policy" draft={policy} onDraft={setPolicy} errors={policyErrors} />
      <Field
        label="Owner"
        id="key-owner-kind"
        help="Who signs in to connect the key to servers where each caller uses their own account (per user OAuth): a user, or any member of a group, as the sign-in names them. Without an owner the key cannot use such servers; it cannot be added later."
      >
        <select
          id="key-owner-kind"
          value={ownerKind}
          onChange={(event) => setOwnerKind(event.currentTarget.value as "" | "user" | "group")}
        >
          <option value="">no owner</option>
          <option value="user">user</option>
          <option value="group">group</option>
        </select>
      </Field>
      {ownerKind ? (
        <Field label="Owner name" id="key-owner-name" help="e.g. ada or engineering." errors={ownerErrors}>
          <input
            id="key-owner-name"
            type="text"
            required
            maxLength={255}
            value={ownerName}
            onInput={(event) => setOwnerName(event.currentTarget.value)}
          />
        </Field>
      ) : null}
      {submit.stopped ? (
        <NothingSent />
      ) : (
        <Problem
          error={
            nameErrors.length || scopeErrors.length || ownerErrors.length || policyErrors.length
              ? undefined
              : submit.error
          }
        />
      )}
      <button type="submit" class="primary" disabled={submit.busy}>
        Create key
      </button>
    </form>
  );
}
