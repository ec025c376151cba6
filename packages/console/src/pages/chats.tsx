/**
 * Chats: for a chat id (kept in the route, `#/chats/<id>`), every server and whether the chat shows
 * its tools, each switchable. A preference clients read, not a security boundary.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { request, seg } from "../api";
import { EmptyState, Field, Problem, usePolled } from "../components";
import { navigate } from "../router";
import type { ChatToggle } from "../types";

export function ChatsPage({ chatId }: { chatId?: string | undefined }) {
  const [typed, setTyped] = useState(chatId ?? "");
  // The box follows the route when it moves to another chat — never on the first render, whose
  // effect runs after paint and would wipe what was typed meanwhile (a fast hand, or a test's fill).
  const routed = useRef(chatId);
  useEffect(() => {
    if (routed.current === chatId) return;
    routed.current = chatId;
    setTyped(chatId ?? "");
  }, [chatId]);
  return (
    <section>
      <h1>Chats</h1>
      <p class="help intro">
        Switching a server off for a chat hides its tools from that chat's clients: a preference for clients,
        not a security boundary (a key's scope is).
      </p>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (typed.trim()) navigate("chats", typed.trim());
        }}
      >
        <Field
          label="Chat id"
          id="chat-id"
          help="The id a client sends as its chat (e.g. ?chat= on /v1/tools)."
        >
          <input
            id="chat-id"
            type="text"
            required
            maxLength={256}
            value={typed}
            onInput={(event) => setTyped(event.currentTarget.value)}
          />
        </Field>
        <button type="submit" class="primary">
          Show servers
        </button>
      </form>
      {chatId ? <ChatServers key={chatId} chatId={chatId} /> : null}
    </section>
  );
}

/** The servers of one chat, each with its switch. */
function ChatServers({ chatId }: { chatId: string }) {
  const path = `/v1/chats/${seg(chatId)}/servers`;
  const loaded = usePolled(() => request<{ servers: ChatToggle[] }>("GET", path), 0, [chatId]);
  /** Switches as they are now (the loaded list, with each change the API confirmed). */
  const [toggles, setToggles] = useState<ChatToggle[] | undefined>(undefined);
  const [pending, setPending] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (loaded.data) setToggles(loaded.data.servers);
  }, [loaded.data]);
  useEffect(() => {
    heading.current?.focus();
  }, []);

  const show = (id: string, enabled: boolean) =>
    setToggles((current) => current?.map((t) => (t.id === id ? { ...t, enabled } : t)));
  const toggle = async (server: ChatToggle, enabled: boolean) => {
    setError(undefined);
    setNotice("");
    setPending(server.id);
    // The switch moves at once, and back if the API refuses.
    show(server.id, enabled);
    try {
      const saved = await request<ChatToggle>("PUT", `${path}/${seg(server.id)}`, { enabled });
      show(saved.id, saved.enabled);
      setNotice(`${saved.name} is ${saved.enabled ? "shown in" : "hidden from"} chat ${chatId}.`);
    } catch (caught) {
      show(server.id, !enabled);
      setError(caught);
    } finally {
      setPending(undefined);
    }
  };

  return (
    <>
      <h2 ref={heading} tabIndex={-1}>
        Servers in chat <span class="mono">{chatId}</span>
      </h2>
      <Problem error={error ?? loaded.error} />
      {!toggles ? (
        loaded.error ? null : (
          <p class="loading">Loading…</p>
        )
      ) : toggles.length === 0 ? (
        <EmptyState title="No servers">
          <p>There are no servers to show or hide yet.</p>
        </EmptyState>
      ) : (
        <>
          <p class="help">
            {toggles.filter((t) => !t.enabled).length} of {toggles.length} switched off in this chat.
          </p>
          <ul class="toggles">
            {toggles.map((server) => (
              <li key={server.id} data-toggle={server.name}>
                <label>
                  <input
                    type="checkbox"
                    class="switch"
                    role="switch"
                    aria-checked={server.enabled}
                    checked={server.enabled}
                    disabled={pending === server.id}
                    onChange={(event) => toggle(server, event.currentTarget.checked)}
                  />
                  <span class="toggle-name">{server.name}</span>
                </label>
                <span class={server.enabled ? "toggle-state on" : "toggle-state off"}>
                  {server.enabled ? "shown" : "switched off"}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
    </>
  );
}
