import { describe, expect, it } from 'vitest';
import { clearCredentials, loadCredentials, saveCredentials } from '../src/lib/credentials.js';
import { ArbiterError } from '@arbiter/sdk/client';
import { problemText } from '../src/lib/api.js';

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
  it('keeps an API key or a bearer token for the tab', () => {
    const s = memoryStorage();
    saveCredentials({ kind: 'apiKey', value: 'arb_x' }, s);
    expect(loadCredentials(s)).toEqual({ kind: 'apiKey', value: 'arb_x' });
    saveCredentials({ kind: 'bearer', value: 'eyJ' }, s);
    expect(loadCredentials(s)).toEqual({ kind: 'bearer', value: 'eyJ' });
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

describe('problem text', () => {
  it('shows a problem as its detail and its listed reasons', () => {
    expect(problemText(new ArbiterError('forbidden', 'role `viewer` does not include `edit`'))).toBe(
      'role `viewer` does not include `edit`',
    );
    const publish = new ArbiterError('cannot_publish', 'policy `p` cannot be published: 1 problem', [
      { code: 'test_failed', message: 'test `senior`: expected `false`, got `true`', path: 'tests.0' },
    ]);
    expect(problemText(publish)).toBe('policy `p` cannot be published: 1 problem: test `senior`: expected `false`, got `true`');
  });
  it('does not repeat a reason the detail already says', () => {
    const err = new ArbiterError('validation_failed', 'invalid flow: node `a`: policy base `x` does not exist', [
      { code: 'unknown_policy', message: 'node `a`: policy base `x` does not exist', path: 'definition.nodes.a.baseId' },
    ]);
    expect(problemText(err)).toBe('invalid flow: node `a`: policy base `x` does not exist');
  });
  it('shows any other failure by its message', () => {
    expect(problemText(new Error('Data is not valid JSON'))).toBe('Data is not valid JSON');
    expect(problemText('plain')).toBe('plain');
  });
});
