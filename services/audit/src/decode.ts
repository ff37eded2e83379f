import { DecisionRecord, EventKind, EventResourceType, type ArbiterEvent } from '@arbiter/contracts';

/**
 * What a message of the events stream holds: an event of the trail, the decision record of a
 * `decided` event, or nothing storable (`rejected`, with why).
 */
export type Decoded = { event: ArbiterEvent } | { decision: DecisionRecord } | { rejected: string };

/**
 * Decodes a message's payload. A message that is not an event (`ArbiterEvent`), or a `decided`
 * event whose details are not a decision record (`DecisionRecord`), is rejected: it is never
 * handed to PostgreSQL, where one bad row would fail its whole batch at every redelivery.
 *
 * These are the contracts' zod schemas checked by hand: at tens of thousands of records a second,
 * the two zod passes (the event, then its record) cost the audit service more than the JSON parse.
 * test/decode.test.ts holds the checks to the schemas (the same verdict on valid and broken
 * events); the regular expressions are the schemas' own. The object is returned as parsed, unknown
 * keys included (zod would strip them; the repositories read known keys only).
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

const UUID = DecisionRecord.shape.decisionId.def.pattern!;
const DATETIME = DecisionRecord.shape.at.def.pattern!;
const EVENT_KINDS: ReadonlySet<string> = new Set(EventKind.options);
const RESOURCE_TYPES: ReadonlySet<string> = new Set(EventResourceType.options);

type Json = Record<string, unknown>;

/** A JSON object (`z.record` and `z.object` of parsed JSON). */
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isOptionalString = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';
const matches = (v: unknown, pattern: RegExp): v is string => typeof v === 'string' && pattern.test(v);
/** `z.number().int()`: a safe integer. */
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

function isEvent(v: unknown): v is ArbiterEvent {
  if (!isObject(v)) return false;
  const { actor, resource } = v;
  return (
    matches(v.eventId, UUID) &&
    isString(v.orgId) &&
    isString(v.kind) &&
    EVENT_KINDS.has(v.kind) &&
    matches(v.at, DATETIME) &&
    isObject(actor) &&
    isString(actor.userId) &&
    isOptionalString(actor.apiKeyId) &&
    isObject(resource) &&
    isString(resource.type) &&
    RESOURCE_TYPES.has(resource.type) &&
    isString(resource.id) &&
    isOptionalString(resource.baseId) &&
    isObject(v.details)
  );
}

function isDecisionRecord(v: unknown): v is DecisionRecord {
  if (!isObject(v)) return false;
  const { caller, result, path } = v;
  return (
    matches(v.decisionId, UUID) &&
    isString(v.orgId) &&
    matches(v.at, DATETIME) &&
    matches(v.now, DATETIME) &&
    (v.kind === 'policy' || v.kind === 'flow') &&
    isString(v.baseId) &&
    isOptionalString(v.policyId) &&
    isOptionalString(v.flowId) &&
    (v.version === null || isInt(v.version)) &&
    isObject(caller) &&
    isString(caller.userId) &&
    isOptionalString(caller.apiKeyId) &&
    isObject(v.input) &&
    typeof v.masked === 'boolean' &&
    (typeof result === 'boolean' || typeof result === 'string' || (typeof result === 'object' && result !== null)) &&
    (v.outcomes === undefined || isObject(v.outcomes)) &&
    (path === undefined || (Array.isArray(path) && path.every(isString))) &&
    (v.errorCode === null || isString(v.errorCode)) &&
    isInt(v.durationUs) &&
    v.durationUs >= 0
  );
}
