import { ArbiterEvent, EventDetails, type DecisionRecord } from '@arbiter/contracts';
import Ajv2020Module from 'ajv/dist/2020.js';
import { z } from 'zod';

// INVARIANT: ajv is a CommonJS module whose `module.exports` also carries the class as `.default`;
// under NodeNext the default import is `module.exports`.
const Ajv2020 = Ajv2020Module.default;

/**
 * What a message of the events stream holds: an event of the trail, the decision record of a
 * `decided` event, or nothing storable (`rejected`, with why).
 */
export type Decoded = { event: ArbiterEvent } | { decision: DecisionRecord } | { rejected: string };

/**
 * Decodes a message's payload. A message that is not an event (`ArbiterEvent`), or a `decided`
 * event whose details are not a decision record (`EventDetails.decided`), is rejected: it is never
 * handed to PostgreSQL, where one bad row would fail its whole batch at every redelivery. A trail
 * event's details are stored as sent (docs/design/events-and-audit.md).
 *
 * The checks are the contracts' zod schemas themselves, exported as JSON Schema by zod and compiled
 * once by ajv: at tens of thousands of records a second, zod's own passes cost the audit service
 * several times the JSON parse; the compiled checks cost a fraction of it. test/decode.test.ts holds
 * them to zod's verdicts. The object is returned as parsed, unknown keys included (zod would strip
 * them; the repositories read known keys only).
 */
export function decodeEvent(payload: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return { rejected: 'not JSON' };
  }
  if (!isEvent(value)) return { rejected: 'not an event' };
  if (value.kind !== 'decided') return { event: value };
  if (!isDecisionRecord(value.details)) return { rejected: 'a `decided` event without a valid decision record' };
  return { decision: value.details };
}

// `validateFormats: false`: zod writes its formats (uuid, date-time) as `pattern`s too, its own
// regular expressions; ajv's formats would check something slightly different.
const ajv = new Ajv2020({ strict: false, validateFormats: false });

/** A type guard checking what `schema` accepts as input (unknown keys pass, as zod's objects let them). */
function compiled<T>(schema: z.ZodType<T>): (v: unknown) => v is T {
  return ajv.compile<T>(z.toJSONSchema(schema, { io: 'input' }));
}

const isEvent = compiled(ArbiterEvent);
const isDecisionRecord = compiled(EventDetails.decided);
