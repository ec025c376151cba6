/** Sign-in: the admin token, pasted once, exchanged for a session cookie and then forgotten. */
import { useState } from "preact/hooks";
import { type Session, signIn } from "../api";
import { Field, Problem, useSubmit } from "../components";

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState("");
  const submit = useSubmit(async () => {
    const session = await signIn(token);
    setToken("");
    onSignedIn(session);
  });
  return (
    <main id="main" class="sign-in">
      <h1>MCP Gateway</h1>
      <form onSubmit={submit.onSubmit}>
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
        <Problem error={submit.error} />
        <button type="submit" class="primary" disabled={submit.busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
