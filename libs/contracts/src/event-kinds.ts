// Plain lists without zod, so the browser console can import them (`@arbiter/contracts/event-kinds`)
// without pulling the schemas into its bundle; `events.ts` builds the zod enums from them.

/**
 * Audit event kinds: the nine kinds of changes and runs, then the identity and
 * lifecycle kinds (docs/design/events-and-audit.md, docs/design/identity.md) (`assigned` stays the kind of a role assignment or change and of
 * a group membership added), then the webhooks service's own (docs/webhooks.md), then the shadow runs of a base (docs/design/shadow-runs.md). `decided` carries one decision record (contracts `decisions.ts`):
 * the audit service stores it in its `decisions` table, not in the trail.
 */
export const EVENT_KINDS = [
  'created',
  'edited',
  'approval requested',
  'approved',
  'rejected',
  'published',
  'assigned',
  'executed',
  'deleted',
  'key created',
  'key revoked',
  'member removed',
  'settings changed',
  'restored',
  'imported',
  'decided',
  'webhook created',
  'webhook changed',
  'webhook deleted',
  'webhook disabled',
  'shadow started',
  'shadow stopped',
  'schedule cancelled',
  'rollout changed',
] as const;

/** What an event is about. */
export const EVENT_RESOURCE_TYPES = ['policy', 'flow', 'group', 'user', 'apikey', 'org', 'webhook'] as const;
