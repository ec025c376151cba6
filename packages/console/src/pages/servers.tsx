/**
 * The servers: each one's live state (colour and text), reason, tools, latency, last success and
 * failure and last error — polled every 2 s, no reload — with a filter and sortable columns.
 */
import { useState } from "preact/hooks";
import { request } from "../api";
import { EmptyState, errorSentence, Filters, ms, Problem, StateBadge, usePolled, when } from "../components";
import { pendingOf } from "../pinning";
import { href } from "../router";
import type { Server, ServerPage } from "../types";

/** How often the table refreshes itself. */
export const REFRESH_MS = 2_000;

/** Every server, page by page. */
export async function loadServers(): Promise<Server[]> {
  const servers: Server[] = [];
  let cursor: string | undefined;
  do {
    const query = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = await request<ServerPage>("GET", `/v1/servers?${query}`);
    servers.push(...page.servers);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return servers;
}

type SortKey = "name" | "state" | "tools" | "latency" | "success";
type Column = { key: SortKey; label: string; value: (server: Server) => string | number };
const NAME_COLUMN: Column = { key: "name", label: "Name", value: (s) => s.name };
const COLUMNS: Column[] = [
  NAME_COLUMN,
  { key: "state", label: "State", value: (s) => s.status.state },
  { key: "tools", label: "Tools", value: (s) => s.status.toolCount },
  {
    key: "latency",
    label: "Latency",
    value: (s) => s.status.lastConnectionLatencyMs ?? Number.POSITIVE_INFINITY,
  },
  { key: "success", label: "Last success", value: (s) => s.status.lastSuccessfulConnectionAt ?? "" },
];

export function ServersPage() {
  const { data: servers, error } = usePolled(loadServers, REFRESH_MS);
  const [filter, setFilter] = useState("");
  const [state, setState] = useState("");
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: "name", descending: false });

  if (!servers) return error ? <Problem error={error} /> : <p class="loading">Loading servers…</p>;
  if (servers.length === 0) {
    return (
      <EmptyState title="No servers yet">
        <p>Register an MCP server to see its status and tools here.</p>
        <p class="actions">
          <a class="button primary" href={href("servers", "new")}>
            Add a server
          </a>
          <a class="button" href={href("import")}>
            Import a .mcp.json
          </a>
        </p>
      </EmptyState>
    );
  }

  const needle = filter.trim().toLowerCase();
  const column = COLUMNS.find((c) => c.key === sort.key) ?? NAME_COLUMN;
  const shown = servers
    .filter((server) => !state || server.status.state === state)
    .filter(
      (server) =>
        !needle ||
        server.name.toLowerCase().includes(needle) ||
        (server.url ?? server.command ?? "").toLowerCase().includes(needle),
    )
    .sort((a, b) => {
      const [x, y] = [column.value(a), column.value(b)];
      const order = x < y ? -1 : x > y ? 1 : 0;
      return sort.descending ? -order : order;
    });

  return (
    <section>
      <div class="page-head">
        <h1>Servers</h1>
        <div class="actions">
          <a class="button primary" href={href("servers", "new")}>
            Add server
          </a>
          <a class="button" href={href("import")}>
            Import
          </a>
        </div>
      </div>
      <Problem error={error} />
      <Filters
        text={filter}
        onText={setFilter}
        placeholder="name, URL or command"
        choice={{
          label: "State",
          value: state,
          onChange: setState,
          anyLabel: "any",
          choices: ["connected", "connecting", "failed", "disabled"],
        }}
      />
      <div class="table-wrap">
        <table class="stack servers">
          <caption class="visually-hidden">Servers and their live status, refreshed every 2 seconds</caption>
          <thead>
            <tr>
              {COLUMNS.map(({ key, label }) => (
                <th
                  key={key}
                  scope="col"
                  aria-sort={sort.key === key ? (sort.descending ? "descending" : "ascending") : undefined}
                >
                  <button
                    type="button"
                    class="sort"
                    onClick={() => setSort({ key, descending: sort.key === key ? !sort.descending : false })}
                  >
                    {label}
                  </button>
                </th>
              ))}
              <th scope="col">Last failure</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((server) => (
              <tr key={server.id} data-server={server.name}>
                <th scope="row">
                  <a href={href("servers", server.name)}>{server.name}</a>
                  <span class="transport">{server.transport}</span>
                </th>
                <td>
                  <StateBadge
                    state={server.status.state}
                    reason={server.status.reason}
                    lastError={server.status.lastError}
                  />
                </td>
                <td class="num">
                  <span class="cell-label">Tools: </span>
                  <span data-col="tools">{server.status.toolCount}</span>
                  {pendingOf(server) > 0 ? (
                    <>
                      {" "}
                      <a class="pending-count" data-col="pending" href={href("servers", server.name)}>
                        <span aria-hidden="true">⚠</span> {pendingOf(server)} pending
                      </a>
                    </>
                  ) : null}
                </td>
                <td class="num">
                  <span class="cell-label">Latency: </span>
                  {ms(server.status.lastConnectionLatencyMs)}
                </td>
                <td>
                  <span class="cell-label">Last success: </span>
                  {when(server.status.lastSuccessfulConnectionAt)}
                </td>
                <td>
                  <span class="cell-label">Last failure: </span>
                  {when(server.status.lastConnectionFailureAt)}
                </td>
                <td class="error-text">
                  <span class="cell-label">Last error: </span>
                  {server.status.lastError ? errorSentence(server.status.lastError) : "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {shown.length === 0 ? <p>No server matches the filter.</p> : null}
    </section>
  );
}
