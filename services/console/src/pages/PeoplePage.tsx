import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { ApiKey, CreatedApiKey, Member, Page, Role, Scope } from '@arbiter/contracts';
import { ROLE_CAPABILITIES } from '@arbiter/contracts/access';
import { useSession } from '../lib/session.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { CursorPager, type CursorTrail } from '../components/CursorPager.js';

const ROLES = Object.keys(ROLE_CAPABILITIES) as Role[];
const PAGE_SIZE = 25;

/** `datetime-local` values are local times; the API takes ISO 8601 instants. */
const iso = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);
const when = (t: string | null): string => (t ? new Date(t).toLocaleString() : '—');

/**
 * The org's members (admins): roles, adding a member, and each member's API keys — issue one
 * (its secret shown once, to copy and hand over) or revoke one. How people get a key without an
 * identity provider (`POST /users/{userId}/apikeys`).
 */
export function PeoplePage() {
  const { api } = useSession();
  const [cursors, setCursors] = useState<CursorTrail>([undefined]);
  const [page, setPage] = useState<Page<Member> | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [newUser, setNewUser] = useState('');
  const [newRole, setNewRole] = useState<Role>('viewer');
  const [reloads, setReloads] = useState(0);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const abort = new AbortController();
    const scoped = api.withOptions({ signal: abort.signal });
    scoped.users
      .list({ pageSize: PAGE_SIZE })
      .page(cursor)
      .then(setPage, (err: unknown) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => abort.abort();
  }, [api, cursor, reloads]);

  const setRole = async (userId: string, role: Role, added: boolean): Promise<boolean> => {
    setError(null);
    setNotice(null);
    try {
      await api.users.setRole(userId, role);
      setNotice(added ? `Added ${userId} as ${role}.` : `${userId} is now ${role}.`);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setReloads((n) => n + 1);
    }
  };

  const add = async (e: FormEvent) => {
    e.preventDefault();
    const userId = newUser.trim();
    if (!userId) return;
    if (await setRole(userId, newRole, true)) {
      setNewUser('');
      setSelected(userId);
    }
  };

  const member = page?.items.find((m) => m.userId === selected) ?? null;
  return (
    <main>
      <h1>People</h1>
      <p className="muted">
        Members of your organization and their roles. Without an identity provider, a member acts through an API key you issue here: it is
        shown once, for you to hand over.
      </p>
      <form className="toolbar" onSubmit={(e) => void add(e)} aria-label="Add a member">
        <label>
          User id <input value={newUser} onChange={(e) => setNewUser(e.target.value)} data-testid="new-user" />
        </label>
        <label>
          Role{' '}
          <select value={newRole} onChange={(e) => setNewRole(e.target.value as Role)} data-testid="new-user-role">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit">Add member</button>
      </form>
      <ErrorBox error={error} />
      {notice && (
        <p className="notice" role="status" data-testid="notice">
          {notice}
        </p>
      )}
      {page && (
        <>
          <table className="list" data-testid="people-list">
            <thead>
              <tr>
                <th>User</th>
                <th>Role</th>
                <th>Member since</th>
                <th>Keys</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((m) => (
                <tr key={m.userId} aria-selected={m.userId === selected}>
                  <td>{m.userId}</td>
                  <td>
                    <select
                      aria-label={`Role of ${m.userId}`}
                      value={m.role}
                      onChange={(e) => void setRole(m.userId, e.target.value as Role, false)}
                    >
                      {ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                  </td>
                  <td>{when(m.createdAt)}</td>
                  <td>
                    <button type="button" onClick={() => setSelected(m.userId)} aria-label={`Keys of ${m.userId}`}>
                      Keys
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Previous" forward="Next →" />
        </>
      )}
      {member && <MemberKeys key={`${member.userId}:${member.role}`} member={member} />}
    </main>
  );
}

/** One member's live keys: issue a key within the member's role (shown once), revoke keys. */
function MemberKeys({ member }: { member: Member }) {
  const { api } = useSession();
  const allowed = ROLE_CAPABILITIES[member.role];
  const [cursors, setCursors] = useState<CursorTrail>([undefined]);
  const [page, setPage] = useState<Page<ApiKey> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([...allowed]);
  const [expires, setExpires] = useState('');
  const [issued, setIssued] = useState<CreatedApiKey | null>(null);
  const [copied, setCopied] = useState(false);
  const [busy, setBusy] = useState(false);
  const cursor = cursors[cursors.length - 1];

  const load = useCallback(
    (signal?: AbortSignal) =>
      (signal ? api.withOptions({ signal }) : api).users
        .keys(member.userId, { pageSize: PAGE_SIZE })
        .page(cursor)
        .then(setPage, (err: unknown) => {
          if (!signal?.aborted) setError(err);
        }),
    [api, member.userId, cursor],
  );
  useEffect(() => {
    const abort = new AbortController();
    void load(abort.signal);
    return () => abort.abort();
  }, [load]);

  const issue = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setIssued(null);
    setCopied(false);
    setBusy(true);
    try {
      const expiresAt = iso(expires);
      setIssued(await api.users.issueKey(member.userId, { name: name.trim(), scopes, ...(expiresAt ? { expiresAt } : {}) }));
      setName('');
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (key: ApiKey) => {
    if (!window.confirm(`Revoke the key “${key.name}” of ${member.userId}? It stops working at once, with every key made with it.`)) return;
    setError(null);
    try {
      await api.apiKeys.revoke(key.apiKeyId);
      if (issued?.apiKeyId === key.apiKeyId) setIssued(null);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  const copy = async (key: string) => {
    try {
      await navigator.clipboard.writeText(key);
      setCopied(true);
    } catch (err) {
      setError(new Error(`Copying failed (${(err as Error).message}): select the key and copy it by hand`));
    }
  };

  const toggle = (s: Scope) =>
    setScopes((now) => (now.includes(s) ? now.filter((x) => x !== s) : allowed.filter((x) => x === s || now.includes(x))));

  return (
    <section className="member-keys" aria-label={`Keys of ${member.userId}`} data-testid="member-keys">
      <h2>
        Keys of {member.userId} <span className="badge">{member.role}</span>
      </h2>
      <form className="toolbar" onSubmit={(e) => void issue(e)} aria-label="Issue a key">
        <label>
          Key name <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} data-testid="key-name" />
        </label>
        <fieldset className="scopes">
          <legend>Scopes (within role {member.role})</legend>
          {allowed.map((s) => (
            <label key={s}>
              <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} /> {s}
            </label>
          ))}
        </fieldset>
        <label>
          Expires <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <button type="submit" disabled={busy || scopes.length === 0}>
          Issue key
        </button>
      </form>
      <ErrorBox error={error} />
      {issued && (
        <div className="issued-key" role="status" data-testid="issued-key">
          <p>
            <strong>Copy this key now: it is shown only once.</strong> Hand it to {issued.owner}; it acts as them with{' '}
            {issued.scopes.join(', ')}.
          </p>
          <code data-testid="issued-key-value">{issued.key}</code>{' '}
          <button type="button" onClick={() => void copy(issued.key)}>
            {copied ? 'Copied' : 'Copy'}
          </button>{' '}
          <button type="button" onClick={() => setIssued(null)}>
            Done
          </button>
        </div>
      )}
      {page && (
        <>
          <table className="list" data-testid="key-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Scopes</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {page.items.length === 0 && (
                <tr>
                  <td colSpan={6} className="muted">
                    No keys: issue one above.
                  </td>
                </tr>
              )}
              {page.items.map((k) => (
                <tr key={k.apiKeyId}>
                  <td>{k.name}</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{when(k.createdAt)}</td>
                  <td>{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
                  <td>{when(k.lastUsedAt)}</td>
                  <td>
                    <button type="button" className="danger" onClick={() => void revoke(k)} aria-label={`Revoke ${k.name}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Previous" forward="Next →" />
        </>
      )}
    </section>
  );
}
