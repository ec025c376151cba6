/**
 * One server: its live status (polled), latency history, configuration (masked), tools with a "try
 * it" form each, and its actions — edit, enable/disable, reconnect, delete (confirmed).
 */

import { assertNever } from "@mcpgw/core/exhaustive";
import { mcpJsonDocument } from "@mcpgw/core/mcp-json-entry";
import { useState } from "preact/hooks";
import { request, seg } from "../api";
import { CallStats } from "../call-stats";
import {
  ConfirmButton,
  CopyField,
  Filters,
  LastError,
  ms,
  Notice,
  Problem,
  StateBadge,
  useAction,
  usePolled,
  useSubmit,
  when,
} from "../components";
import { ConnectClients } from "../connect";
import { LatencyChart } from "../latency-chart";
import { PendingChanges } from "../pending-changes";
import { PINNING_LABELS, pendingOf, pinningOf } from "../pinning";
import { href, navigate } from "../router";
import { ServerBrowse } from "../server-browse";
import { matchesTool, ToolList } from "../tool-list";
import type { LatencyPoint, Server, Tool } from "../types";
import { REFRESH_MS } from "./servers";

export function ServerDetailPage({ id }: { id: string }) {
  const path = `/v1/servers/${seg(id)}`;
  const server = usePolled(() => request<Server>("GET", path), REFRESH_MS, [id]);
  const latency = usePolled(() => request<{ points: LatencyPoint[] }>("GET", `${path}/latency`), 5_000, [id]);
  const connected = server.data?.status.state === "connected";
  const tools = usePolled(
    () => (connected ? request<{ tools: Tool[] }>("GET", `${path}/tools`) : Promise.resolve({ tools: [] })),
    0,
    // A decided change (approved: a new definition) reloads them too.
    [id, connected, server.data?.status.toolCount, server.data ? pendingOf(server.data) : 0],
  );
  const action = useAction();

  const s = server.data;
  if (!s) return server.error ? <Problem error={server.error} /> : <p class="loading">Loading…</p>;
  const act = (work: () => Promise<unknown>) =>
    action.run(async () => {
      await work();
      server.reload();
      return "";
    });

  return (
    <section>
      <p>
        <a href={href("servers")}>← Servers</a>
      </p>
      <div class="page-head">
        <h1>
          {s.name}{" "}
          <StateBadge state={s.status.state} reason={s.status.reason} lastError={s.status.lastError} />
        </h1>
        <div class="actions">
          <a class="button" href={href("servers", s.name, "edit")}>
            Edit
          </a>
          <button
            type="button"
            onClick={() =>
              act(() => request("PATCH", path, { enabled: !s.enabled }, { "if-match": `"${s.version}"` }))
            }
          >
            {s.enabled ? "Disable" : "Enable"}
          </button>
          <button
            type="button"
            disabled={!s.enabled}
            onClick={() => act(() => request("POST", `${path}/reconnect`))}
          >
            Reconnect
          </button>
          <ConfirmButton
            label="Delete"
            danger
            question={`Delete ${s.name}? Its tools disappear from every client, and its stored headers and env are removed.`}
            onConfirm={() =>
              act(async () => {
                await request("DELETE", path);
                navigate("servers");
              })
            }
          />
        </div>
      </div>
      <Problem error={action.error ?? server.error} />
      <Notice text={action.notice} />
      {s.status.authorization === "required" ? (
        <Authorize
          path={path}
          name={s.name}
          perUser={s.auth?.type === "oauth" && s.auth.mode === "per_user"}
        />
      ) : null}
      {pendingOf(s) > 0 ? (
        <PendingChanges
          path={path}
          count={pendingOf(s)}
          onDecided={(sentence) => {
            // Said by the page: deciding the last change removes the list, and a notice inside with it.
            void action.run(async () => sentence);
            server.reload();
          }}
        />
      ) : null}
      <div class="cards">
        <div class="card">
          <h2>Status</h2>
          <dl class="facts">
            <dt>State</dt>
            <dd>
              <StateBadge state={s.status.state} reason={s.status.reason} lastError={s.status.lastError} />
            </dd>
            <dt>Tools</dt>
            <dd data-field="toolCount">{s.status.toolCount}</dd>
            <dt>Pending changes</dt>
            <dd data-field="pendingChanges">{pendingOf(s)}</dd>
            <dt>Last latency</dt>
            <dd>{ms(s.status.lastConnectionLatencyMs)}</dd>
            <dt>Last success</dt>
            <dd>{when(s.status.lastSuccessfulConnectionAt)}</dd>
            <dt>Last failure</dt>
            <dd>{when(s.status.lastConnectionFailureAt)}</dd>
            <dt>Last error</dt>
            <dd data-field="lastError">
              <LastError error={s.status.lastError} />
            </dd>
            <dt>Next attempt</dt>
            <dd>{when(s.status.nextAttemptAt)}</dd>
            <dt>Protocol</dt>
            <dd>{s.status.protocolVersion ?? "—"}</dd>
            {s.auth ? (
              <>
                <dt>OAuth</dt>
                <dd>
                  {s.auth.type === "client_credentials"
                    ? "client credentials"
                    : s.auth.mode === "per_user"
                      ? "per user: each caller's own connection"
                      : "shared: one connection for every caller"}
                </dd>
                <dt>Authorization</dt>
                <dd data-field="authorization">
                  {s.status.authorization === "authorized"
                    ? `authorized, until ${s.status.credentialExpiresAt ? new Date(s.status.credentialExpiresAt).toLocaleString() : "—"} (renewed before then)`
                    : s.status.authorization === "refused"
                      ? "client credentials refused: correct the client id or secret"
                      : "authorization required"}
                </dd>
              </>
            ) : null}
          </dl>
        </div>
        <div class="card">
          <h2>Configuration</h2>
          <dl class="facts">
            <KindFacts server={s} />
            <dt>Timeout</dt>
            <dd>{s.timeoutSeconds} s</dd>
            <dt>Enabled</dt>
            <dd>{s.enabled ? "yes" : "no"}</dd>
            <dt>Pinning</dt>
            <dd data-field="pinning">{PINNING_LABELS[pinningOf(s)]}</dd>
          </dl>
          <details class="export">
            <summary>Export as .mcp.json</summary>
            <CopyField id="server-export" label=".mcp.json" value={mcpJsonDocument(s.name, s)} multiline />
            <p class="help">
              Secret values stay masked: put the real ones in before importing it elsewhere (an import refuses
              a mask). The timeout, OAuth, scope and child limits are not part of a .mcp.json.
            </p>
          </details>
        </div>
      </div>
      <ConnectClients id="server-connect" server={s.name} />
      <h2>Latency</h2>
      {latency.data ? <LatencyChart points={latency.data.points} /> : <Problem error={latency.error} />}
      <h2>Calls</h2>
      <CallStats server={s.name} idBase="server-calls" />
      <h2>Tools</h2>
      <Problem error={tools.error} />
      {tools.data && tools.data.tools.length > 0 ? (
        <ServerTools key={s.name} server={s.name} tools={tools.data.tools} />
      ) : (
        <p class="help">
          {connected ? "This server offers no tools." : "Tools appear once the server is connected."}
        </p>
      )}
      {connected ? <ServerBrowse key={s.name} server={s.name} /> : null}
    </section>
  );
}

/** How many of a server's tools its page lists before "Show more" (a filter narrows them instead). */
const TOOLS_SHOWN = 10;

/** A server's tools, collapsed, behind a filter by name or description; the first {@link TOOLS_SHOWN}. */
function ServerTools(props: { server: string; tools: Tool[] }) {
  const [filter, setFilter] = useState("");
  const shown = props.tools.filter((tool) => matchesTool(filter, tool.name, tool.description));
  return (
    <>
      <p class="help" data-count={props.tools.length}>
        {props.tools.length} {props.tools.length === 1 ? "tool" : "tools"}, called as{" "}
        <code>
          {props.server}__{"<tool>"}
        </code>{" "}
        on <code>/mcp</code>. Open one to read its parameters and try it.
      </p>
      <Filters text={filter} onText={setFilter} placeholder="name or description" />
      <ToolList
        limit={TOOLS_SHOWN}
        tools={shown.map((tool) => ({
          tool,
          callName: `${props.server}__${tool.name}`,
          stats: { server: props.server, tool: tool.name },
        }))}
      />
      {shown.length === 0 ? <p>No tool matches the filter.</p> : null}
    </>
  );
}

/** The kind of a server and the configuration only its kind has. */
function KindFacts({ server }: { server: Server }) {
  switch (server.transport) {
    case "http":
      return (
        <>
          <dt>Kind</dt>
          <dd>Remote (HTTP)</dd>
          <dt>URL</dt>
          <dd class="mono">{server.url}</dd>
          <dt>Headers</dt>
          <dd class="mono">{mapText(server.headers)}</dd>
        </>
      );
    case "stdio":
      return (
        <>
          <dt>Kind</dt>
          <dd>Command (stdio)</dd>
          <dt>Command</dt>
          <dd class="mono">{[server.command, ...(server.args ?? [])].join(" ")}</dd>
          <dt>Env</dt>
          <dd class="mono">{mapText(server.env)}</dd>
          <dt>Secret</dt>
          <dd>{server.secretRef ? `${server.secretRef} (${server.secretFormat ?? "env"})` : "—"}</dd>
          <dt>Scope</dt>
          <dd>{server.scope}</dd>
          <dt>Isolation</dt>
          <dd>{server.isolation === "per_caller" ? "one child per caller" : "shared by every caller"}</dd>
        </>
      );
    default:
      return assertNever(server.transport);
  }
}

function mapText(map: Record<string, string> | undefined): string {
  const entries = Object.entries(map ?? {});
  return entries.length ? entries.map(([key, value]) => `${key}: ${value}`).join("\n") : "—";
}

/**
 * An upstream that needs OAuth and has no usable sign-in: the admin authorizes the gateway at the
 * upstream's authorization server (a new tab), and the server connects once it comes back.
 */
function Authorize({ path, name, perUser }: { path: string; name: string; perUser: boolean }) {
  const [url, setUrl] = useState<string | undefined>(undefined);
  const submit = useSubmit(async () => {
    const { authorizationUrl } = await request<{ authorizationUrl: string }>("POST", `${path}/authorize`);
    setUrl(authorizationUrl);
    window.open(authorizationUrl, "_blank", "noopener");
  });
  return (
    <form class="notice" onSubmit={submit.onSubmit}>
      <p>
        <strong>{name} needs an authorization.</strong> Sign the gateway in at the server's authorization
        server;{" "}
        {perUser
          ? "this is your own connection (it lets the gateway list the tools); every other caller authorizes their own when a call first needs it."
          : "every caller then uses that sign-in."}
      </p>
      <button type="submit" class="primary" disabled={submit.busy}>
        Authorize
      </button>
      {url ? (
        <p class="help">
          A new tab opened;{" "}
          <a href={url} target="_blank" rel="noopener noreferrer">
            open the authorization page
          </a>{" "}
          if it did not. This page updates when the server connects.
        </p>
      ) : null}
      <Problem error={submit.error} />
    </form>
  );
}
