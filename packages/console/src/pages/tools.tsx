/**
 * The whole tool catalogue (`GET /v1/tools`: every tool of every enabled, connected server), grouped
 * by server and reloaded every 10 s, with a filter by name or description and by server; each tool
 * opens to its schema and "Try it" form (mounted when first opened, kept while the page is).
 */
import { useState } from "preact/hooks";
import { request } from "../api";
import { EmptyState, Filters, Problem, usePolled } from "../components";
import { href } from "../router";
import { ToolView } from "../tool-view";
import type { CatalogTool } from "../types";

/** How often the catalogue reloads itself (a server's tools appear once it connects). */
const REFRESH_MS = 10_000;

export function ToolsPage() {
  const { data, error, reload } = usePolled(
    () => request<{ tools: CatalogTool[] }>("GET", "/v1/tools").then((body) => body.tools),
    REFRESH_MS,
  );
  const [filter, setFilter] = useState("");
  const [server, setServer] = useState("");
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());

  if (!data) return error ? <Problem error={error} /> : <p class="loading">Loading tools…</p>;
  const head = (
    <div class="page-head">
      <h1>Tools</h1>
      <div class="actions">
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
    </div>
  );
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
  const needle = filter.trim().toLowerCase();
  const shown = data.filter(
    (tool) =>
      (!server || tool.server === server) &&
      (!needle ||
        tool.name.toLowerCase().includes(needle) ||
        (tool.description ?? "").toLowerCase().includes(needle)),
  );
  const groups = servers
    .map((name) => ({ name, tools: shown.filter((tool) => tool.server === name) }))
    .filter((group) => group.tools.length > 0);

  return (
    <section>
      {head}
      <p class="help intro">
        {data.length} tools from {servers.length} connected {servers.length === 1 ? "server" : "servers"}.
        Open a tool to read its parameters and try it.
      </p>
      <Problem error={error} />
      <Filters
        text={filter}
        onText={setFilter}
        placeholder="name or description"
        choiceLabel="Server"
        choice={server}
        onChoice={setServer}
        anyLabel="all"
        choices={servers}
      />
      {groups.map((group) => (
        <section key={group.name} class="tool-group" data-server={group.name}>
          <h2>
            <a href={href("servers", group.name)}>{group.name}</a>{" "}
            <span class="count">
              {group.tools.length} {group.tools.length === 1 ? "tool" : "tools"}
            </span>
          </h2>
          <ul class="tool-list">
            {group.tools.map((tool) => {
              const short = shortName(tool);
              return (
                <li key={tool.name}>
                  <details
                    data-tool={tool.name}
                    onToggle={(event) => {
                      if (event.currentTarget.open && !opened.has(tool.name))
                        setOpened(new Set([...opened, tool.name]));
                    }}
                  >
                    <summary>
                      <code class="tool-summary-name">{tool.name}</code>
                      {tool.description ? (
                        <span class="tool-summary-description">{firstLine(tool.description)}</span>
                      ) : null}
                    </summary>
                    {opened.has(tool.name) ? (
                      <ToolView tool={{ ...tool, name: short }} callName={tool.name} />
                    ) : null}
                  </details>
                </li>
              );
            })}
          </ul>
        </section>
      ))}
      {groups.length === 0 ? <p>No tool matches the filter.</p> : null}
    </section>
  );
}

/** The tool's own name, without its server's prefix. */
function shortName(tool: CatalogTool): string {
  const prefix = `${tool.server}__`;
  return tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}

/** A description's first line, cut to a summary's length. */
function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
