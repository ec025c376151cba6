/**
 * Sign-in: through the OpenID provider when the gateway has one (a navigation: the provider sends the
 * browser back with the session cookie set), or the admin token — break-glass — pasted once, exchanged
 * for a session cookie and then forgotten.
 */
import { useEffect, useState } from "preact/hooks";
import { type Session, type SignInOptions, signIn, signInOptions } from "../api";
import { Field, Problem, useSubmit } from "../components";

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState("");
  const [options, setOptions] = useState<SignInOptions | undefined>(undefined);
  useEffect(() => {
    // Without the options (an older API, a failure) the token form alone is offered.
    signInOptions().then(setOptions, () => setOptions({ provider: null }));
  }, []);
  const provider = options?.provider;
  const submit = useSubmit(async () => {
    const session = await signIn(token);
    setToken("");
    onSignedIn(session);
  });
  return (
    <main id="main" class="sign-in">
      <h1>MCP Gateway</h1>
      {provider && (
        <p>
          <a class="button primary" id="provider-sign-in" href={provider.url}>
            Sign in with {provider.name}
          </a>
        </p>
      )}
      {provider && <h2>Or with the admin token (break-glass)</h2>}
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
        <button type="submit" class={provider ? undefined : "primary"} disabled={submit.busy}>
          Sign in{provider ? " with the token" : ""}
        </button>
      </form>
    </main>
  );
}
