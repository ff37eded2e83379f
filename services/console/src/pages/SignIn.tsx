import { useState, type FormEvent } from 'react';
import { consoleClient, problemText } from '../lib/api.js';
import type { Credentials } from '../lib/credentials.js';
import type { MeResponse } from '@arbiter/contracts';

/** Sign in with an API key or a pasted bearer token; checked with `GET /me` before it is kept. */
export function SignIn({ onSignedIn }: { onSignedIn: (credentials: Credentials, me: MeResponse) => void }) {
  const [kind, setKind] = useState<Credentials['kind']>('apiKey');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const credentials: Credentials = { kind, value: value.trim() };
    if (!credentials.value) {
      setError(kind === 'apiKey' ? 'Enter an API key.' : 'Paste a bearer token.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const me = await consoleClient(credentials).me();
      onSignedIn(credentials, me);
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin">
      <h1>Arbiter console</h1>
      <p>Write, test, review and publish rules. Sign in with an API key of your organization.</p>
      <form onSubmit={(e) => void submit(e)} aria-label="Sign in">
        <fieldset>
          <legend>Credential</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'apiKey'} onChange={() => setKind('apiKey')} /> API key
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'bearer'} onChange={() => setKind('bearer')} /> Bearer token
          </label>
        </fieldset>
        <label className="field">
          {kind === 'apiKey' ? 'API key' : 'Bearer token'}
          <input
            type="password"
            autoComplete="off"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            placeholder={kind === 'apiKey' ? 'arb_…' : 'eyJ…'}
            data-testid="credential"
            autoFocus
          />
        </label>
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint">The key stays in this tab only (session storage) and is sent in a header, never in a URL.</p>
      </form>
    </main>
  );
}
