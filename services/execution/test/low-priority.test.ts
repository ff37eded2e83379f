/** Replays (impact analysis) are the caller's low-priority work: its other keys go first. */
import { describe, expect, it } from 'vitest';
import { LOW_PRIORITY, Scheduler } from '../src/queue/callers.js';
import type { Entry } from '../src/queue/jobs.js';

describe('low-priority keys', () => {
  it('pass their turn while another key of the person has work waiting, and go when it has none', () => {
    const s = new Scheduler(5);
    const low = s.keyOf('acme:alice', `${LOW_PRIORITY}key:k1`);
    const live = s.keyOf('acme:alice', 'key:k1');
    const entry = (key: typeof low) => ({ kind: 'task', key, gone: false }) as unknown as Entry;
    s.push(entry(low));
    s.push(entry(live));
    const person = s.persons.get('acme:alice')!;
    // The low key joined the ring first, yet the live key's entry goes first, every time.
    expect(s.nextKey(person, false).id).toBe('key:k1');
    expect(s.nextKey(person).id).toBe('key:k1');
    expect(s.nextKey(person).id).toBe('key:k1');
    s.unqueue(live);
    expect(s.nextKey(person).id).toBe(`${LOW_PRIORITY}key:k1`);
  });
});
