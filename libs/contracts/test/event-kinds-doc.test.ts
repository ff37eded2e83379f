import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../src/event-kinds.js';
import { EventKind } from '../src/events.js';

const doc = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/api.md'), 'utf8');

/** The kinds the "Audit trail" section of docs/api.md names, from "is an event:" to "The audit service stores them". */
function documentedKinds(): string[] {
  const sentence = /## Audit trail\n[\s\S]*?is an event:([\s\S]*?)The audit service stores them/.exec(doc);
  if (!sentence) throw new Error('docs/api.md: the Audit trail section no longer lists the event kinds');
  return [...new Set([...sentence[1].matchAll(/`([a-z ]+)`/g)].map((m) => m[1]))];
}

describe('event kinds', () => {
  it('are the ones docs/api.md lists, in the zod enum as in the plain list', () => {
    expect(documentedKinds().sort()).toEqual([...EVENT_KINDS].sort());
    expect(EventKind.options).toEqual([...EVENT_KINDS]);
  });
});
