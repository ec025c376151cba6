/**
 * The audit trail (`GET /v1/audit`), newest first: filters by principal, server, tool, outcome and
 * time; "Load more" follows the cursor; calls and admin changes told apart (a change lists the names of
 * the fields it changed). A row opens its trace summary: what the event records — trace id, plane,
 * principal, source, timing, sizes, argument key names, outcome — and the loaded events of its trace.
 */
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { request } from "../api";
import { CopyField, ms, Problem, StackTable } from "../components";
import type { AuditEvent, AuditPrincipal } from "../types";

/** Events per page. */
const PAGE = 50;
/** Events of the same trace listed in a summary, at most. */
const SAME_TRACE_SHOWN = 20;

interface Filter {
  principal: string;
  server: string;
  tool: string;
  outcome: string;
  since: string;
  until: string;
}

const NO_FILTER: Filter = { principal: "", server: "", tool: "", outcome: "", since: "", until: "" };

/** Outcomes offered as suggestions (any error code may be typed). */
const OUTCOMES = [
  "ok",
  "tool_error",
  "input_required",
  "tool.not_found",
  "auth.forbidden",
  "upstream.timeout",
];

export function ActivityPage() {
  const [draft, setDraft] = useState<Filter>(NO_FILTER);
  const [applied, setApplied] = useState<Filter>(NO_FILTER);
  const [events, setEvents] = useState<AuditEvent[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const [opened, setOpened] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);

  const load = async (filter: Filter, after: string | null, shown: AuditEvent[]) => {
    setBusy(true);
    setError(undefined);
    try {
      const page = await request<{ events: AuditEvent[]; cursor: string | null }>(
        "GET",
        `/v1/audit?${queryOf(filter, after)}`,
      );
      setEvents([...shown, ...page.events]);
      setCursor(page.cursor);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  // A new filter (or Refresh) starts over.
  useEffect(() => {
    setOpened(undefined);
    void load(applied, null, []);
  }, [applied, tick]);

  const set = (field: keyof Filter) => (event: Event) =>
    setDraft({ ...draft, [field]: (event.currentTarget as HTMLInputElement).value });

  return (
    <section>
      <div class="page-head">
        <h1>Activity</h1>
        <div class="actions">
          <button type="button" onClick={() => setTick((n) => n + 1)}>
            Refresh
          </button>
        </div>
      </div>
      <p class="help intro">
        Every tool call and admin change, newest first. Events name who, where, how it ended and how long it
        took — never an argument's or a secret's value.
      </p>
      <form
        class="filters activity-filters"
        aria-label="Activity filters"
        onSubmit={(event) => {
          event.preventDefault();
          setApplied({ ...draft });
        }}
      >
        <label>
          Principal
          <input
            type="text"
            value={draft.principal}
            onInput={set("principal")}
            placeholder="key, user or admin"
          />
        </label>
        <label>
          Server
          <input type="text" value={draft.server} onInput={set("server")} placeholder="name or id" />
        </label>
        <label>
          Tool
          <input type="text" value={draft.tool} onInput={set("tool")} placeholder="tool or server__tool" />
        </label>
        <label>
          Outcome
          <input type="text" list="activity-outcomes" value={draft.outcome} onInput={set("outcome")} />
          <datalist id="activity-outcomes">
            {OUTCOMES.map((outcome) => (
              <option key={outcome} value={outcome} />
            ))}
          </datalist>
        </label>
        <label>
          Since
          <input type="datetime-local" value={draft.since} onInput={set("since")} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={draft.until} onInput={set("until")} />
        </label>
        <div class="filter-actions">
          <button type="submit" class="primary">
            Apply
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTER);
              setApplied(NO_FILTER);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <Problem error={error} />
      {events === undefined ? (
        busy ? (
          <p class="loading">Loading activity…</p>
        ) : null
      ) : events.length === 0 ? (
        <p class="help" data-empty="activity">
          No event matches.
        </p>
      ) : (
        <StackTable
          caption="Audit events, newest first"
          columns={["Time", "Event", "Principal", "Server", "Outcome", "Duration"]}
        >
          {events.map((event) => (
            <Fragment key={event.id}>
              <tr data-event={event.id} data-type={event.type} data-outcome={event.outcome}>
                <td>
                  <span class="cell-label">Time: </span>
                  <time dateTime={event.at}>{new Date(event.at).toLocaleString()}</time>
                </td>
                <th scope="row" data-col="event">
                  <EventName event={event} />
                </th>
                <td data-col="principal">
                  <span class="cell-label">Principal: </span>
                  {principalText(event.principal)}
                </td>
                <td data-col="server">
                  <span class="cell-label">Server: </span>
                  {event.serverName ?? event.serverId ?? "—"}
                </td>
                <td data-col="outcome">
                  <span class="cell-label">Outcome: </span>
                  <span class={`outcome-${event.outcome === "ok" ? "ok" : "error"}`}>{event.outcome}</span>
                </td>
                <td class="num">
                  <span class="cell-label">Duration: </span>
                  {ms(event.durationMs)}
                </td>
                <td class="row-actions">
                  <button
                    type="button"
                    aria-expanded={opened === event.id}
                    aria-controls={opened === event.id ? "event-detail" : undefined}
                    onClick={() => setOpened(opened === event.id ? undefined : event.id)}
                  >
                    Details<span class="visually-hidden"> of {eventWords(event)}</span>
                  </button>
                </td>
              </tr>
              {opened === event.id ? (
                <tr class="detail-row">
                  <td colSpan={7}>
                    <TraceSummary event={event} loaded={events} onClose={() => setOpened(undefined)} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </StackTable>
      )}
      {cursor ? (
        <p>
          <button type="button" disabled={busy} onClick={() => load(applied, cursor, events ?? [])}>
            Load more
          </button>
        </p>
      ) : null}
    </section>
  );
}

/** What happened, in a cell: a call's tool, or a change's action and the fields it changed. */
function EventName({ event }: { event: AuditEvent }) {
  if (event.type === "change")
    return (
      <>
        <span class="badge kind-change">change</span> <code>{event.action ?? "change"}</code>
        {event.resource ? <> {event.resource.name ?? event.resource.id}</> : null}
        {event.fields?.length ? (
          <span class="changed-fields"> · changed {event.fields.join(", ")}</span>
        ) : null}
      </>
    );
  return (
    <>
      <span class="badge kind-call">call</span> <code>{event.tool ?? "—"}</code>
      {event.toolset ? <span class="help"> via {event.toolset}</span> : null}
    </>
  );
}

/** One event's trace summary: everything it records, and the loaded events that share its trace. */
function TraceSummary(props: { event: AuditEvent; loaded: AuditEvent[]; onClose: () => void }) {
  const { event } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [event.id]);
  const ended = Date.parse(event.at);
  const sameTrace = event.traceId
    ? props.loaded.filter((other) => other.id !== event.id && other.traceId === event.traceId)
    : [];
  const listed = sameTrace.slice(0, SAME_TRACE_SHOWN);
  return (
    <section
      id="event-detail"
      class="card event-detail"
      aria-labelledby="event-detail-title"
      data-event={event.id}
    >
      <div class="page-head">
        <h2 id="event-detail-title" tabIndex={-1} ref={heading}>
          Trace summary: {eventWords(event)}
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {event.traceId ? (
        <CopyField id="event-trace-id" label="Trace id" value={event.traceId} />
      ) : (
        <p class="help">This event has no trace id (it ran outside a trace).</p>
      )}
      <dl class="facts">
        <dt>Kind</dt>
        <dd data-field="type">{event.type === "call" ? "tool call" : "admin change"}</dd>
        <dt>Plane</dt>
        <dd data-field="plane">{event.plane}</dd>
        <dt>Principal</dt>
        <dd data-field="principal">{principalText(event.principal)}</dd>
        <dt>Source</dt>
        <dd data-field="source">{event.source ?? "—"}</dd>
        <dt>Server</dt>
        <dd data-field="server">
          {event.serverName ?? "—"}
          {event.serverId ? <span class="mono"> ({event.serverId})</span> : null}
        </dd>
        {event.type === "call" ? (
          <>
            <dt>Tool</dt>
            <dd data-field="tool">
              {event.tool ?? "—"}
              {event.toolset ? ` (tool set ${event.toolset})` : ""}
            </dd>
            <dt>Argument keys</dt>
            <dd data-field="argumentKeys">
              {event.argumentKeys?.length ? event.argumentKeys.join(", ") : "none"}
            </dd>
            <dt>Request size</dt>
            <dd data-field="requestBytes">{bytes(event.requestBytes)}</dd>
            <dt>Response size</dt>
            <dd data-field="responseBytes">{bytes(event.responseBytes)}</dd>
          </>
        ) : (
          <>
            <dt>Action</dt>
            <dd data-field="action">{event.action ?? "—"}</dd>
            <dt>On</dt>
            <dd data-field="resource">
              {event.resource
                ? `${event.resource.type} ${event.resource.name ?? ""} (${event.resource.id})`
                : "—"}
            </dd>
            <dt>Changed fields</dt>
            <dd data-field="fields">{event.fields?.length ? event.fields.join(", ") : "none"}</dd>
          </>
        )}
        <dt>Outcome</dt>
        <dd data-field="outcome">{event.outcome}</dd>
        <dt>Timing</dt>
        <dd data-field="duration">
          {ms(event.durationMs)}: from {new Date(ended - event.durationMs).toLocaleTimeString()} to{" "}
          {new Date(ended).toLocaleTimeString()}
        </dd>
      </dl>
      <h3>Same trace</h3>
      {sameTrace.length ? (
        <ul class="same-trace">
          {listed.map((other) => (
            <li key={other.id}>
              {new Date(other.at).toLocaleTimeString()} · {eventWords(other)} · {other.outcome} ·{" "}
              {ms(other.durationMs)}
            </li>
          ))}
          {sameTrace.length > listed.length ? <li>and {sameTrace.length - listed.length} more</li> : null}
        </ul>
      ) : (
        <p class="help">
          No other loaded event shares this trace. The spans of its trace (gateway, upstream, runner, child)
          are in the tracing backend the gateway exports to.
        </p>
      )}
    </section>
  );
}

/** Who acted, in words: a key by name and id, a user by subject, or the admin. */
export function principalText(principal: AuditPrincipal): string {
  switch (principal.kind) {
    case "key":
      return `key ${principal.keyName ?? "(unnamed)"} (${principal.keyId})`;
    case "user":
      return `user ${principal.sub}`;
    default:
      return principal.sub ? `admin (${principal.sub})` : "admin";
  }
}

function eventWords(event: AuditEvent): string {
  return event.type === "call"
    ? `call of ${event.serverName ? `${event.serverName}__` : ""}${event.tool ?? "?"}`
    : `${event.action ?? "change"} ${event.resource?.name ?? event.resource?.id ?? ""}`.trim();
}

function bytes(value: number | undefined): string {
  return value === undefined ? "—" : `${value} bytes`;
}

/** The query of one page: the filter's non-empty fields (times as ISO 8601), the limit and the cursor. */
function queryOf(filter: Filter, cursor: string | null): string {
  const query = new URLSearchParams();
  for (const key of ["principal", "server", "tool", "outcome"] as const) {
    const value = filter[key].trim();
    if (value) query.set(key, value);
  }
  for (const key of ["since", "until"] as const) {
    if (filter[key]) query.set(key, new Date(filter[key]).toISOString());
  }
  query.set("limit", String(PAGE));
  if (cursor) query.set("cursor", cursor);
  return query.toString();
}
