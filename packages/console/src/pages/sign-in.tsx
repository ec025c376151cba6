/** Sign-in: the admin token, pasted once, exchanged for a session cookie and then forgotten. */
import { useState } from "preact/hooks";
import { type Session, signIn } from "../api";
import { Field, Problem } from "../components";

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>MCP Gateway</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            const session = await signIn(token);
            setToken("");
            onSignedIn(session);
          } catch (caught) {
            setError(caught);
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          label="Admin token"
          id="token"
          help="Paste it once: the console keeps a session cookie, never the token."
        >
          <input
            id="token"
            name="token"
            type="password"
            autoComplete="off"
            required
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </Field>
        <Problem error={error} />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
