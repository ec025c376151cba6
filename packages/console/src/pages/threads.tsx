/**
 * Threads: each with the instances of thread-scoped stdio servers it runs (server and its state,
 * worktree, started), polled; stop a thread (confirmed) — its instances end and it is forgotten; and
 * start an instance of a thread-scoped server for a thread id and worktree root.
 */
import { useState } from "preact/hooks";
import { ApiError, request, seg } from "../api";
import {
  ConfirmButton,
  EmptyState,
  Field,
  NothingSent,
  Notice,
  Problem,
  StateBadge,
  useAction,
  useCheckedSubmit,
  usePolled,
  when,
} from "../components";
import { threadProblems } from "../form-checks";
import { href } from "../router";
import type {
  ApiKey,
  Server,
  ThreadDetail,
  ThreadInstance,
  ThreadRegistration,
  ThreadSummary,
} from "../types";
import { loadServers } from "./servers";

/** How often the threads refresh themselves. */
const REFRESH_MS = 5_000;
/** Thread details read at once. */
const PARALLEL_READS = 6;

/** Every thread the admin may see, with its instances (a thread gone since the list is left out). */
async function loadThreads(): Promise<ThreadDetail[]> {
  const { threads } = await request<{ threads: ThreadSummary[] }>("GET", "/v1/threads");
  const details: ThreadDetail[] = [];
  for (let start = 0; start < threads.length; start += PARALLEL_READS) {
    const batch = await Promise.all(
      threads.slice(start, start + PARALLEL_READS).map((thread) =>
        request<ThreadDetail>("GET", `/v1/threads/${seg(thread.id)}`).catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return undefined;
          throw error;
        }),
      ),
    );
    for (const detail of batch) if (detail) details.push(detail);
  }
  return details.reverse(); // newest first
}

export function ThreadsPage() {
  const threads = usePolled(loadThreads, REFRESH_MS);
  const servers = usePolled(loadServers, REFRESH_MS);
  const keys = usePolled(() => request<{ keys: ApiKey[] }>("GET", "/v1/keys"), 0);
  const action = useAction();

  const byName = new Map((servers.data ?? []).map((server) => [server.name, server]));
  const keyNames = new Map((keys.data?.keys ?? []).map((key) => [key.id, key.name]));
  const threadScoped = (servers.data ?? []).filter(
    (server) => server.transport === "stdio" && server.scope === "thread",
  );
  const stop = (thread: ThreadDetail) =>
    action.run(async () => {
      const result = await request<{ stopped: number; removed: number }>(
        "DELETE",
        `/v1/threads/${seg(thread.id)}`,
      );
      threads.reload();
      return `Stopped thread ${thread.id}: ${result.stopped} ${result.stopped === 1 ? "instance" : "instances"} ended.`;
    });

  return (
    <section>
      <h1>Threads</h1>
      <p class="help intro">
        A thread is a client's conversation or worktree. Each thread-scoped stdio server runs one instance per
        thread, started in the thread's worktree; stopping a thread ends its instances.
      </p>
      <Notice text={action.notice} />
      <Problem error={action.error ?? threads.error} />
      {!threads.data ? (
        threads.error ? null : (
          <p class="loading">Loading threads…</p>
        )
      ) : threads.data.length === 0 ? (
        <EmptyState title="No threads running">
          <p>
            Threads appear when a client starts a thread-scoped server for its conversation (
            <code>POST /v1/threads/&lt;thread&gt;/servers/&lt;server&gt;</code>), or when you start one below.
            Project-scoped servers are shared by every thread and are not listed here.
          </p>
        </EmptyState>
      ) : (
        threads.data.map((thread) => (
          <article
            class="card thread"
            key={thread.id}
            data-thread={thread.id}
            aria-labelledby={`t-${thread.id}`}
          >
            <div class="page-head">
              <div>
                <h2 class="mono" id={`t-${thread.id}`}>
                  {thread.id}
                </h2>
                <p class="help">
                  Started {when(thread.createdAt)} by{" "}
                  {thread.owner === "admin"
                    ? "the admin"
                    : `key ${keyNames.get(thread.owner) ?? thread.owner}`}
                </p>
              </div>
              <ConfirmButton
                label="Stop thread"
                danger
                question={`Stop thread ${thread.id}? Its ${thread.instances.length} ${thread.instances.length === 1 ? "instance ends" : "instances end"} and the thread is forgotten.`}
                confirmLabel="Stop"
                onConfirm={() => stop(thread)}
              />
            </div>
            {thread.instances.length === 0 ? (
              <p class="help">No instances (their servers were deleted).</p>
            ) : (
              <Instances instances={thread.instances} servers={byName} />
            )}
          </article>
        ))
      )}
      <StartForm
        servers={servers.data ? threadScoped : undefined}
        serversError={servers.error}
        onStarted={(instance) => {
          action.setNotice(
            `${instance.server} is running in thread ${instance.threadId}${instance.pid ? ` (pid ${instance.pid})` : ""}.`,
          );
          threads.reload();
        }}
      />
    </section>
  );
}

function Instances(props: { instances: ThreadRegistration[]; servers: Map<string, Server> }) {
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption class="visually-hidden">Instances in this thread</caption>
        <thead>
          <tr>
            <th scope="col">Server</th>
            <th scope="col">Server state</th>
            <th scope="col">Worktree</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {props.instances.map((instance) => {
            const server = props.servers.get(instance.server);
            return (
              <tr key={instance.serverId} data-instance={instance.server}>
                <th scope="row">
                  <a href={href("servers", instance.server)}>{instance.server}</a>
                </th>
                <td>
                  <span class="cell-label">Server state: </span>
                  {server ? (
                    <StateBadge
                      state={server.status.state}
                      reason={server.status.reason}
                      lastError={server.status.lastError}
                    />
                  ) : (
                    "—"
                  )}
                </td>
                <td data-col="worktree">
                  <span class="cell-label">Worktree: </span>
                  <span class="mono">{instance.worktreeRoot}</span>
                </td>
                <td>
                  <span class="cell-label">Started: </span>
                  {when(instance.createdAt)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Starts an instance of a thread-scoped server in a thread (idempotent: a live one is kept). */
function StartForm(props: {
  /** The thread-scoped servers; undefined while they load. */
  servers: Server[] | undefined;
  serversError: unknown;
  onStarted: (instance: ThreadInstance) => void;
}) {
  const [server, setServer] = useState("");
  const [threadId, setThreadId] = useState("");
  const [worktreeRoot, setWorktreeRoot] = useState("");
  const submit = useCheckedSubmit(
    () => threadProblems(threadId),
    async () => {
      const path = `/v1/threads/${seg(threadId.trim())}/servers/${seg(chosen)}`;
      const instance = await request<ThreadInstance>("POST", path, { worktreeRoot: worktreeRoot.trim() });
      props.onStarted(instance);
    },
  );
  const servers = props.servers ?? [];
  const chosen = server || servers[0]?.name || "";
  const threadErrors = submit.errorsOf("threadId");
  const worktreeErrors = submit.errorsOf("worktreeRoot", [
    "thread.worktree_missing",
    "thread.worktree_forbidden",
  ]);

  return (
    <form class="panel" aria-labelledby="start-title" noValidate onSubmit={submit.onSubmit}>
      <h2 id="start-title">Start an instance</h2>
      {!props.servers ? (
        props.serversError ? (
          <Problem error={props.serversError} />
        ) : (
          <p class="loading">Loading servers…</p>
        )
      ) : servers.length === 0 ? (
        <p class="help">
          No thread-scoped servers: <a href={href("servers", "new")}>add a command (stdio) server</a> with
          scope “thread” to run one instance per thread.
        </p>
      ) : (
        <>
          <Field label="Server" id="start-server" help="Thread-scoped stdio servers.">
            <select
              id="start-server"
              value={chosen}
              onChange={(event) => setServer(event.currentTarget.value)}
            >
              {servers.map((option) => (
                <option key={option.id} value={option.name}>
                  {option.name}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Thread id"
            id="start-thread"
            help="Letters, digits, '.', '_', ':' or '-'; a new id starts a new thread."
            errors={threadErrors}
          >
            <input
              id="start-thread"
              type="text"
              required
              maxLength={200}
              value={threadId}
              onInput={(event) => setThreadId(event.currentTarget.value)}
            />
          </Field>
          <Field
            label="Worktree root"
            id="start-worktree"
            help="An absolute path on the runner's machine; the instance starts there."
            errors={worktreeErrors}
          >
            <input
              id="start-worktree"
              type="text"
              required
              placeholder="/work/my-thread"
              value={worktreeRoot}
              onInput={(event) => setWorktreeRoot(event.currentTarget.value)}
            />
          </Field>
          {submit.stopped ? (
            <NothingSent />
          ) : (
            <Problem error={threadErrors.length || worktreeErrors.length ? undefined : submit.error} />
          )}
          <button type="submit" class="primary" disabled={submit.busy}>
            Start instance
          </button>
        </>
      )}
    </form>
  );
}
