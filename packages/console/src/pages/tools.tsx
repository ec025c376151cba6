/**
 * The whole tool catalogue (`GET /v1/tools`: every tool of every enabled, connected server), grouped
 * by server and reloaded every 10 s, with a filter by name or description and by server; each tool
 * opens to its schema and "Try it" form (tool-list.tsx). "View as"
 * shows the catalogue as one key or sign-in mapping sees it (`?as=key:<id>` / `?as=<subject>`: the
 * gateway's own decision, its servers, tool sets and tool policy).
 */
import { useState } from "preact/hooks";
import { request } from "../api";
import { EmptyState, Filters, Problem, usePolled } from "../components";
import { href } from "../router";
import { matchesTool, ToolList } from "../tool-list";
import type { AccessMapping, ApiKey, CatalogTool } from "../types";

/** How often the catalogue reloads itself (a server's tools appear once it connects). */
const REFRESH_MS = 10_000;

export function ToolsPage() {
  const [viewAs, setViewAs] = useState("");
  const loaded = usePolled(
    () =>
      request<{ tools: CatalogTool[] }>(
        "GET",
        `/v1/tools${viewAs ? `?as=${encodeURIComponent(viewAs)}` : ""}`,
      ).then((body) => ({ as: viewAs, tools: body.tools })),
    REFRESH_MS,
    [viewAs],
  );
  const { error, reload } = loaded;
  // Never another caller's catalogue under this one's name while it loads.
  const data = loaded.data?.as === viewAs ? loaded.data.tools : undefined;
  const [filter, setFilter] = useState("");
  const [server, setServer] = useState("");

  const head = (
    <>
      <div class="page-head">
        <h1>Tools</h1>
        <div class="actions">
          <button type="button" onClick={reload}>
            Refresh
          </button>
        </div>
      </div>
      <ViewAs value={viewAs} onChange={setViewAs} />
    </>
  );
  if (!data)
    return (
      <section>
        {head}
        {error ? <Problem error={error} /> : <p class="loading">Loading tools…</p>}
      </section>
    );
  if (data.length === 0 && viewAs) {
    return (
      <section>
        {head}
        <Problem error={error} />
        <EmptyState title={`No tools for ${viewAs}`}>
          <p>Its servers, tool sets and tool policy leave it no tool it may use.</p>
        </EmptyState>
      </section>
    );
  }
  if (data.length === 0) {
    return (
      <section>
        {head}
        <Problem error={error} />
        <EmptyState title="No tools yet">
          <p>Tools appear here once a server is added and connected.</p>
          <p class="actions">
            <a class="button primary" href={href("servers", "new")}>
              Add a server
            </a>
            <a class="button" href={href("import")}>
              Import a .mcp.json
            </a>
          </p>
        </EmptyState>
      </section>
    );
  }

  const servers = [...new Set(data.map((tool) => tool.server))].sort();
  const shown = data.filter(
    (tool) => (!server || tool.server === server) && matchesTool(filter, tool.name, tool.description),
  );
  const groups = servers
    .map((name) => ({ name, tools: shown.filter((tool) => tool.server === name) }))
    .filter((group) => group.tools.length > 0);

  return (
    <section>
      {head}
      <p class="help intro" data-count={data.length}>
        {data.length} tools from {servers.length} connected {servers.length === 1 ? "server" : "servers"}
        {viewAs ? `, as ${viewAs} sees them` : ""}. Open a tool to read its parameters and try it.
      </p>
      <Problem error={error} />
      <Filters
        text={filter}
        onText={setFilter}
        placeholder="name or description"
        choice={{ label: "Server", value: server, onChange: setServer, anyLabel: "all", choices: servers }}
      />
      {groups.map((group) => (
        <section key={group.name} class="tool-group" data-server={group.name}>
          <h2>
            <a href={href("servers", group.name)}>{group.name}</a>{" "}
            <span class="count">
              {group.tools.length} {group.tools.length === 1 ? "tool" : "tools"}
            </span>
          </h2>
          <ToolList
            tools={group.tools.map((tool) => {
              const short = shortName(tool);
              return {
                tool: { ...tool, name: short },
                callName: tool.name,
                stats: { server: tool.server, tool: short },
              };
            })}
          />
        </section>
      ))}
      {groups.length === 0 ? <p>No tool matches the filter.</p> : null}
    </section>
  );
}

/** Whose catalogue the page shows: every tool (the admin's), a key's, or a sign-in mapping's. */
function ViewAs(props: { value: string; onChange: (value: string) => void }) {
  const keys = usePolled(() => request<{ keys: ApiKey[] }>("GET", "/v1/keys").then((body) => body.keys), 0);
  const mappings = usePolled(
    () => request<{ access: AccessMapping[] }>("GET", "/v1/access").then((body) => body.access),
    0,
  );
  return (
    <div class="filters">
      <label>
        View as
        <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
          <option value="">every tool (admin)</option>
          {keys.data?.length ? (
            <optgroup label="API keys">
              {keys.data.map((key) => (
                <option key={key.id} value={`key:${key.id}`}>
                  key {key.name}
                </option>
              ))}
            </optgroup>
          ) : null}
          {mappings.data?.length ? (
            <optgroup label="Sign-in access">
              {mappings.data.map((mapping) => (
                <option key={mapping.subject} value={mapping.subject}>
                  {mapping.subject}
                </option>
              ))}
            </optgroup>
          ) : null}
        </select>
      </label>
    </div>
  );
}

/** The tool's own name, without its server's prefix. */
function shortName(tool: CatalogTool): string {
  const prefix = `${tool.server}__`;
  return tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}
