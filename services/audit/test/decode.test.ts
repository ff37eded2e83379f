/**
 * The consumer's checks (src/decode.ts: the contracts' schemas compiled by ajv) against zod's own verdicts: for a valid
 * trail event, a valid `decided` event and every variation of them below (each field removed, set
 * to null and to values of every JSON type, ids and times in forms the schemas accept or refuse),
 * decodeEvent accepts exactly what `ArbiterEvent` (and, for `decided`, `DecisionRecord`) accepts.
 */
import { ArbiterEvent, DecisionRecord } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../src/decode.js';

type Json = Record<string, unknown>;

const RECORD: DecisionRecord = {
  decisionId: '01936f0e-8b5c-7d3a-9f1e-2a4b6c8d0e1f',
  orgId: 'acme',
  at: '2026-11-26T10:11:12.345Z',
  now: '2026-11-26T10:11:12.300Z',
  kind: 'policy',
  baseId: 'base-1',
  policyId: 'pol-1',
  version: 3,
  caller: { userId: 'alice', apiKeyId: 'key-1' },
  input: { applicant: { score: 47 } },
  masked: false,
  result: true,
  outcomes: { 'theory passed': true },
  path: ['start', 'end'],
  errorCode: null,
  durationUs: 42,
};

const TRAIL: ArbiterEvent = {
  eventId: '01936f0e-8b5c-7d3a-9f1e-2a4b6c8d0e20',
  orgId: 'acme',
  kind: 'edited',
  at: '2026-11-26T10:11:12.345Z',
  actor: { userId: 'alice', apiKeyId: 'key-1' },
  resource: { type: 'policy', id: 'pol-1', baseId: 'base-1' },
  details: { from: 1, to: 2 },
};

const DECIDED: ArbiterEvent = {
  ...TRAIL,
  eventId: RECORD.decisionId,
  kind: 'decided',
  details: RECORD as unknown as Json,
};

const ANY = [null, true, false, 0, -1, 1.5, 2 ** 53, 2 ** 60, '', 'x', [], ['a'], [1], {}, { a: 1 }];
const UUIDS = [
  '01936F0E-8B5C-7D3A-9F1E-2A4B6C8D0E1F',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '01936f0e-8b5c-0d3a-9f1e-2a4b6c8d0e1f',
  '01936f0e-8b5c-7d3a-cf1e-2a4b6c8d0e1f',
  '01936f0e8b5c7d3a9f1e2a4b6c8d0e1f',
  '{01936f0e-8b5c-7d3a-9f1e-2a4b6c8d0e1f}',
];
const TIMES = [
  '2026-11-26T10:11:12Z',
  '2026-11-26T10:11:12.123456Z',
  '2026-11-26T10:11Z',
  '2026-11-26T10:11:12.345+01:00',
  '2026-11-26T10:11:12.345',
  '2026-11-26 10:11:12.345Z',
  '2024-02-29T00:00:00.000Z',
  '2026-02-29T00:00:00.000Z',
  '2026-02-30T00:00:00.000Z',
  '2026-04-31T00:00:00.000Z',
  '2026-13-01T00:00:00.000Z',
  '2026-11-26T24:00:00.000Z',
  '2026-11-26',
];
const KINDS = ['created', 'approval requested', 'decided', 'Decided', 'policy', 'flow', 'other'];

/** Paths of every field of `value`, nested objects included (arrays as leaves). */
function paths(value: Json, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = [...prefix, k];
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? [path, ...paths(v as Json, path)] : [path];
  });
}

/** A copy of `value` with the field at `path` set to `to` (removed when `to` is `REMOVE`). */
const REMOVE = Symbol('remove');
function variant(value: Json, path: string[], to: unknown): Json {
  const copy = structuredClone(value);
  let at: Json = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Json;
  if (to === REMOVE) delete at[path.at(-1)!];
  else at[path.at(-1)!] = to;
  return copy;
}

function zodAccepts(value: unknown): boolean {
  const event = ArbiterEvent.safeParse(value);
  if (!event.success) return false;
  return event.data.kind !== 'decided' || DecisionRecord.safeParse(event.data.details).success;
}

function variants(): Array<{ name: string; value: unknown }> {
  const out: Array<{ name: string; value: unknown }> = [];
  for (const [base, name] of [
    [TRAIL, 'trail'],
    [DECIDED, 'decided'],
  ] as const) {
    out.push({ name, value: base });
    for (const path of paths(base as Json)) {
      const where = `${name} ${path.join('.')}`;
      out.push({ name: `${where} removed`, value: variant(base as Json, path, REMOVE) });
      for (const v of [...ANY, ...UUIDS, ...TIMES, ...KINDS])
        out.push({ name: `${where} = ${JSON.stringify(v)}`, value: variant(base as Json, path, v) });
    }
    out.push({ name: `${name} with an unknown key`, value: { ...base, extra: 1 } });
  }
  for (const value of [null, 1, 'x', [], [DECIDED], {}]) out.push({ name: `payload ${JSON.stringify(value)}`, value });
  return out;
}

describe('decodeEvent', () => {
  it('accepts exactly the events the zod schemas accept, and hands back the decision record of a `decided` one', () => {
    const all = variants();
    const disagree = all
      .filter(({ value }) => !('rejected' in decodeEvent(JSON.stringify(value))) !== zodAccepts(value))
      .map((v) => `${v.name}: zod ${zodAccepts(v.value) ? 'accepts' : 'rejects'}`);
    expect(disagree).toEqual([]);
    // Both verdicts are well represented.
    const accepted = all.filter((v) => zodAccepts(v.value)).length;
    expect(accepted).toBeGreaterThan(50);
    expect(all.length - accepted).toBeGreaterThan(500);
    expect(decodeEvent(JSON.stringify(DECIDED))).toEqual({ decision: RECORD });
    expect(decodeEvent(JSON.stringify(TRAIL))).toEqual({ event: TRAIL });
  });

  it('rejects a payload that is not JSON', () => {
    expect(decodeEvent('not json')).toEqual({ rejected: 'not JSON' });
    expect(decodeEvent('')).toEqual({ rejected: 'not JSON' });
  });
});
