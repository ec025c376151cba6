/**
 * Tool sets: named selections of tools across servers, each served as its own MCP endpoint
 * (`/mcp/sets/{name}`) and usable as a key's or mapping's scope. The list (tools, rules, endpoint),
 * one set's page (the tools it holds now, its endpoint with a Copy button, the edit form), a create
 * form, and delete (confirmed).
 */
import { request, seg } from "../api";
import {
  ConfirmButton,
  CopyField,
  EmptyState,
  Notice,
  Problem,
  StackTable,
  useAction,
  usePolled,
} from "../components";
import { href, navigate } from "../router";
import { ToolSetForm } from "../toolset-form";
import type { CatalogTool, ToolSet } from "../types";

/** The path of a set's MCP endpoint on the gateway. */
export function setEndpoint(name: string): string {
  return `/mcp/sets/${seg(name)}`;
}

/** Every tool set. */
export function loadToolSets(): Promise<ToolSet[]> {
  return request<{ toolsets: ToolSet[] }>("GET", "/v1/toolsets").then((body) => body.toolsets);
}

/** The live catalogue the picker offers (every tool of every connected server). */
function loadCatalogue(): Promise<CatalogTool[]> {
  return request<{ tools: CatalogTool[] }>("GET", "/v1/tools").then((body) => body.tools);
}

export function ToolSetsPage() {
  const sets = usePolled(loadToolSets, 0);
  const catalogue = usePolled(loadCatalogue, 0);
  const action = useAction();
  const list = sets.data?.slice().sort((a, b) => (a.name < b.name ? -1 : 1));
  const remove = (set: ToolSet) =>
    action.run(async () => {
      await request("DELETE", `/v1/toolsets/${seg(set.name)}`);
      sets.reload();
      return `Deleted the tool set ${set.name}: its endpoint is gone.`;
    });

  return (
    <section>
      <h1>Tool sets</h1>
      <p class="help intro">
        A tool set is a named selection of tools across servers: picked by name, or by rule (a server, what
        the tools declare about themselves, a name pattern). Each set is an MCP endpoint of its own, and a key
        or a sign-in mapping may be scoped to it.
      </p>
      <Notice text={action.notice} />
      <Problem error={action.error ?? sets.error} />
      {!list ? (
        sets.error ? null : (
          <p class="loading">Loading tool sets…</p>
        )
      ) : list.length === 0 ? (
        <EmptyState title="No tool sets yet">
          <p>Create one below: pick tools from the catalogue, or add a rule.</p>
        </EmptyState>
      ) : (
        <StackTable caption="Tool sets" columns={["Name", "Selection", "Endpoint"]}>
          {list.map((set) => (
            <tr key={set.name} data-toolset={set.name}>
              <th scope="row">
                <a href={href("toolsets", set.name)}>{set.name}</a>
                {set.description ? <span class="help"> · {set.description}</span> : null}
              </th>
              <td>
                <span class="cell-label">Selection: </span>
                {selectionText(set)}
              </td>
              <td class="mono">
                <span class="cell-label">Endpoint: </span>
                {setEndpoint(set.name)}
              </td>
              <td class="row-actions">
                <ConfirmButton
                  label={`Delete ${set.name}`}
                  danger
                  question={deleteQuestion(set.name)}
                  confirmLabel="Delete"
                  onConfirm={() => remove(set)}
                />
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      <ToolSetForm
        catalogue={catalogue.data}
        catalogueError={catalogue.error}
        onSaved={(saved) => navigate("toolsets", saved.name)}
      />
    </section>
  );
}

/** One set: the tools it holds now, its endpoint, and its form (replacing it). */
export function ToolSetPage({ name }: { name: string }) {
  const path = `/v1/toolsets/${seg(name)}`;
  const set = usePolled(() => request<ToolSet>("GET", path), 0, [name]);
  const catalogue = usePolled(loadCatalogue, 0);
  const action = useAction();
  const s = set.data;
  if (!s) return set.error ? <Problem error={set.error} /> : <p class="loading">Loading…</p>;
  const resolved = s.resolved ?? [];
  return (
    <section>
      <p>
        <a href={href("toolsets")}>← Tool sets</a>
      </p>
      <div class="page-head">
        <h1>{s.name}</h1>
        <div class="actions">
          <ConfirmButton
            label="Delete"
            danger
            question={deleteQuestion(s.name)}
            onConfirm={() =>
              action.run(async () => {
                await request("DELETE", path);
                navigate("toolsets");
                return "";
              })
            }
          />
        </div>
      </div>
      {s.description ? <p class="intro">{s.description}</p> : null}
      <Notice text={action.notice} />
      <Problem error={action.error ?? set.error} />
      <CopyField id="set-endpoint" label="MCP endpoint (on the gateway's URL)" value={setEndpoint(s.name)} />
      <h2>
        Tools it holds now <span class="count">{resolved.length}</span>
      </h2>
      {resolved.length === 0 ? (
        <p class="help">No tool matches yet: the set's tools appear as their servers connect.</p>
      ) : (
        <ul class="inline-list" aria-label={`Tools of ${s.name}`} data-resolved>
          {resolved.map((tool) => (
            <li key={tool} class="mono">
              {tool}
            </li>
          ))}
        </ul>
      )}
      <ToolSetForm
        key={s.name}
        editing={s}
        catalogue={catalogue.data}
        catalogueError={catalogue.error}
        onSaved={() => {
          set.reload();
          action.setNotice(`Saved ${s.name}.`);
        }}
      />
    </section>
  );
}

/** What deleting a set asks first. */
function deleteQuestion(name: string): string {
  return `Delete the tool set ${name}? Its endpoint stops answering. (A set a key or mapping uses is kept until they no longer name it.)`;
}

/** What a set selects, in words: its picked tools and rules. */
function selectionText(set: ToolSet): string {
  const tools = set.tools?.length ?? 0;
  const rules = set.rules?.length ?? 0;
  const parts = [
    ...(tools ? [`${tools} ${tools === 1 ? "tool" : "tools"}`] : []),
    ...(rules ? [`${rules} ${rules === 1 ? "rule" : "rules"}`] : []),
  ];
  return parts.join(", ") || "nothing yet";
}
