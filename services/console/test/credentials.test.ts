import { describe, expect, it } from 'vitest';
import { authHeaders, clearCredentials, loadCredentials, saveCredentials } from '../src/lib/credentials.js';
import { ApiError, problemText, query } from '../src/lib/api.js';

function memoryStorage(): Storage {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, v),
    removeItem: (k) => void m.delete(k),
    clear: () => m.clear(),
    key: (i) => [...m.keys()][i] ?? null,
    get length() {
      return m.size;
    },
  };
}

describe('credentials', () => {
  it('keeps an API key or a bearer token and sends it in the right header', () => {
    const s = memoryStorage();
    saveCredentials({ kind: 'apiKey', value: 'arb_x' }, s);
    expect(loadCredentials(s)).toEqual({ kind: 'apiKey', value: 'arb_x' });
    expect(authHeaders({ kind: 'apiKey', value: 'arb_x' })).toEqual({ 'x-api-key': 'arb_x' });
    expect(authHeaders({ kind: 'bearer', value: 'eyJ' })).toEqual({ authorization: 'Bearer eyJ' });
    clearCredentials(s);
    expect(loadCredentials(s)).toBeNull();
  });
  it('treats a damaged or foreign entry as none', () => {
    const s = memoryStorage();
    for (const raw of ['{', '{"kind":"cookie","value":"x"}', '{"kind":"apiKey","value":""}', 'null']) {
      s.setItem('arbiter.console.credentials', raw);
      expect(loadCredentials(s), raw).toBeNull();
    }
  });
});

describe('API helpers', () => {
  it('shows a problem as its detail and its listed reasons', () => {
    expect(problemText(new ApiError(403, 'forbidden', 'role `viewer` does not include `edit`'))).toBe(
      'role `viewer` does not include `edit`',
    );
    const publish = new ApiError(422, 'cannot_publish', 'policy `p` cannot be published: 1 problem', [
      { code: 'test_failed', message: 'test `senior`: expected `false`, got `true`', path: 'tests.0' },
    ]);
    expect(problemText(publish)).toBe('policy `p` cannot be published: 1 problem: test `senior`: expected `false`, got `true`');
  });
  it('does not repeat a reason the detail already says', () => {
    const err = new ApiError(400, 'validation_failed', 'invalid flow: node `a`: policy base `x` does not exist', [
      { code: 'unknown_policy', message: 'node `a`: policy base `x` does not exist', path: 'definition.nodes.a.baseId' },
    ]);
    expect(problemText(err)).toBe('invalid flow: node `a`: policy base `x` does not exist');
  });
  it('builds query strings from the defined values only', () => {
    expect(query({ limit: 20, q: 'a b', status: '', cursor: undefined })).toBe('?limit=20&q=a+b');
    expect(query({})).toBe('');
  });
});
