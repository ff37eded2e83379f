import type { AuditEvent } from '@arbiter/contracts';

/** What the audit page needs of an event. */
export type SummarizedEvent = Pick<AuditEvent, 'kind' | 'actor' | 'resource' | 'details'>;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const short = (id: string) => (id.length > 13 ? `${id.slice(0, 8)}…` : id);

/** The id a policy's or flow's name is known by: its base (every record of a base has its name). */
export function nameKey(e: Pick<SummarizedEvent, 'resource'>): string {
  return e.resource.baseId ?? e.resource.id;
}

/**
 * What an event is about, by name where one is known: the name in the event (`details.name`), else
 * from `names` (policies and flows by base id, fetched by the page), else a short id.
 */
export function resourceLabel(e: SummarizedEvent, names: ReadonlyMap<string, string>): string {
  const { type, id } = e.resource;
  const named = (noun: string, name: string | null, fallback: string) => (name ? `${noun} “${name}”` : `${noun} ${fallback}`);
  switch (type) {
    case 'policy':
    case 'flow':
      return named(type, names.get(nameKey(e)) ?? str(e.details.name), short(nameKey(e)));
    case 'apikey':
      return named('key', str(e.details.name), short(id));
    case 'group':
      return named('group', names.get(id) ?? str(e.details.name), short(id));
    case 'user':
      return `member ${id}`;
    case 'org':
      return 'the organization';
    case 'webhook':
      return named('webhook', str(e.details.url), short(id));
  }
}

const quoted = (comment: unknown) => (str(comment) ? `: “${str(comment)}”` : '');

/** One sentence saying what happened: who did what to what, with the event's telling details. */
export function auditSummary(e: SummarizedEvent, names: ReadonlyMap<string, string> = new Map()): string {
  const who = e.actor.userId;
  const what = resourceLabel(e, names);
  const d = e.details;
  switch (e.kind) {
    case 'created': {
      const from = num(d.basedOnVersion);
      return `${who} created ${from === null ? what : `a draft of ${what} from version ${from}`}`;
    }
    case 'edited': {
      const fields = Array.isArray(d.fields) ? d.fields.filter((f): f is string => typeof f === 'string') : [];
      return `${who} edited ${what}${fields.length ? ` (${fields.join(', ')})` : ''}`;
    }
    case 'approval requested':
      return `${who} asked for a review of ${what}`;
    case 'approved':
      return `${who} approved ${what}${quoted(d.comment)}`;
    case 'rejected':
      return `${who} rejected ${what}${quoted(d.comment)}`;
    case 'published': {
      const version = num(d.version);
      const back = num(d.rollbackOf);
      const from = str(d.effectiveFrom);
      return (
        `${who} published ${what}${version === null ? '' : ` as version ${version}`}` +
        `${back === null ? '' : ` (rollback to version ${back})`}${from ? `, in effect from ${from}` : ''}`
      );
    }
    case 'rollout changed': {
      const version = num(d.version);
      const of = `the rollout of ${what}${version === null ? '' : ` version ${version}`}`;
      const guard = d.reason === 'guard' ? ' (its error guard tripped)' : '';
      switch (d.action) {
        case 'started':
          return `${who} started ${of} at ${num(d.percent) ?? 0} %`;
        case 'promoted':
          return `${who} promoted ${of} to every run`;
        case 'rolled_back':
          return `${who} rolled back ${of}${guard}`;
        default:
          return `${who} moved ${of} to ${num(d.percent) ?? 0} %`;
      }
    }
    case 'schedule cancelled':
      return `${who} cancelled the schedule of ${what}${num(d.version) === null ? '' : ` version ${num(d.version)}`}`;
    case 'assigned':
      if (e.resource.type === 'user' && str(d.role)) {
        return d.added === true ? `${who} added ${what} as ${str(d.role)}` : `${who} gave ${what} the role ${str(d.role)}`;
      }
      return `${who} changed the members of ${what}`;
    case 'executed':
      return `${who} ran ${what}`;
    case 'deleted':
      return `${who} deleted ${what}`;
    case 'key created': {
      const owner = str(d.owner);
      const scopes = Array.isArray(d.scopes) ? ` (${d.scopes.join(', ')})` : '';
      return `${who} created ${what}${owner && owner !== who ? ` for ${owner}` : ''}${scopes}`;
    }
    case 'key revoked': {
      const owner = str(d.owner);
      return `${who} revoked ${what}${owner && owner !== who ? ` of ${owner}` : ''}`;
    }
    case 'member removed': {
      const revoked = num(d.keysRevoked);
      return `${who} removed ${what}${revoked ? ` and revoked ${revoked} key${revoked === 1 ? '' : 's'}` : ''}`;
    }
    case 'settings changed': {
      const g = d.governanceApproval as { from?: unknown; to?: unknown } | undefined;
      const m = d.minCoverage as { to?: unknown } | undefined;
      const parts: string[] = [];
      if (typeof g?.to === 'boolean' && g.from !== g.to) parts.push(`turned review before publishing ${g.to ? 'on' : 'off'}`);
      if (typeof m?.to === 'number') parts.push(`set the least test coverage to ${m.to} %`);
      return parts.length > 0 ? `${who} ${parts.join(' and ')}` : `${who} changed the organization's settings`;
    }
    case 'restored':
      return `${who} restored ${what}`;
    case 'imported':
      return `${who} imported ${what}`;
    case 'decided':
      return `${who} got a decision of ${what}`;
    case 'webhook created':
      return `${who} added ${what}`;
    case 'webhook changed':
      return d.secretRotated === true ? `${who} rotated the secret of ${what}` : `${who} changed ${what}`;
    case 'webhook deleted':
      return `${who} deleted ${what}`;
    case 'webhook disabled':
      return `${what} was turned off (${str(d.reason) === 'gone' ? 'it answered 410 Gone' : 'it failed for the whole retry window'})`;
    case 'shadow started': {
      const rate = num(d.sampleRate);
      return `${who} started shadow runs of ${what}${rate === null ? '' : ` on ${Math.round(rate * 1000) / 10} % of its runs`}`;
    }
    case 'shadow stopped': {
      const changed = num(d.changed);
      const compared = num(d.compared);
      return `${who} stopped shadow runs of ${what}${changed === null || compared === null ? '' : ` (${changed} of ${compared} compared runs changed)`}`;
    }
    default:
      // A kind without its own sentence yet (a new one) still reads: who, what happened, to what.
      return `${who}: ${String((e as { kind: unknown }).kind)} (${what})`;
  }
}
