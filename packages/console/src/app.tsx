/** The console: signed out, the sign-in page; signed in, the navigation and the page of the route. */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { resumeSession, type Session, signOut, whenSignedOut } from "./api";
import { Problem } from "./components";
import { AccessPage } from "./pages/access";
import { ActivityPage } from "./pages/activity";
import { ChatsPage } from "./pages/chats";
import { ImportPage } from "./pages/import";
import { KeysPage } from "./pages/keys";
import { SecretsPage } from "./pages/secrets";
import { ServerDetailPage } from "./pages/server-detail";
import { ServerFormPage } from "./pages/server-form";
import { ServersPage } from "./pages/servers";
import { SignInPage } from "./pages/sign-in";
import { ThreadsPage } from "./pages/threads";
import { ToolsPage } from "./pages/tools";
import { ToolSetPage, ToolSetsPage } from "./pages/toolsets";
import { href, useRoute } from "./router";

const NAV: Array<{ path: string; label: string }> = [
  { path: "servers", label: "Servers" },
  { path: "tools", label: "Tools" },
  { path: "activity", label: "Activity" },
  { path: "toolsets", label: "Tool sets" },
  { path: "import", label: "Import" },
  { path: "keys", label: "Keys" },
  { path: "secrets", label: "Secrets" },
  { path: "threads", label: "Threads" },
  { path: "chats", label: "Chats" },
  { path: "access", label: "Access" },
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    resumeSession().then((found) => setSession(found ?? null), setError);
  }, []);
  if (error) return <Problem error={error} />;
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignInPage onSignedIn={setSession} />;
  return (
    <Shell
      onSignOut={async () => {
        await signOut();
        setSession(null);
      }}
    >
      <Page />
    </Shell>
  );
}

function Shell(props: { onSignOut: () => void; children: ComponentChildren }) {
  const [section] = useRoute();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href("servers")}>
          MCP Gateway
        </a>
        <nav aria-label="Sections">
          <ul class="nav-list">
            {NAV.map(({ path, label }) => (
              <li key={path}>
                <a href={href(path)} aria-current={(section ?? "servers") === path ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}

function Page() {
  const [section = "servers", id, sub] = useRoute();
  switch (section) {
    case "servers":
      // Keyed by route: a form or page never carries one server's state (a draft, a filter) into another's.
      if (id === "new") return <ServerFormPage key="new" />;
      if (id && sub === "edit") return <ServerFormPage key={`edit:${id}`} id={id} />;
      if (id) return <ServerDetailPage key={id} id={id} />;
      return <ServersPage />;
    case "tools":
      return <ToolsPage />;
    case "activity":
      return <ActivityPage />;
    case "toolsets":
      return id ? <ToolSetPage name={id} /> : <ToolSetsPage />;
    case "import":
      return <ImportPage />;
    case "keys":
      return <KeysPage />;
    case "secrets":
      return <SecretsPage />;
    case "threads":
      return <ThreadsPage />;
    case "access":
      return <AccessPage />;
    case "chats":
      return <ChatsPage chatId={id} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page here. <a href={href("servers")}>Go to the servers.</a>
          </p>
        </section>
      );
  }
}
