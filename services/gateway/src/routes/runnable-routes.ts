import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ArbiterError,
  hasCapability,
  RunnableChangesQuery,
  RunnableQuery,
  RunnableSnapshot,
  RunReport,
  RunReportReply,
  type Principal,
  type RunnableSelection,
  type RunnableSnapshotPage,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { busValidatedReply } from '../http/bus-validated.js';
import { errorResponses } from '../http/openapi.js';
import { problemOf, toArbiterError } from '../http/problem.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RunnableClient } from '../clients/runnable-client.js';
import type { RunnableWatch } from '../clients/runnable-watch.js';
import { checkReportBounds, DEFAULT_REPORT_BOUNDS, type ReportBounds } from '../runnable/report-bounds.js';

/** Dependencies of {@link runnableRoutes}. */
export interface RunnableRoutesOptions {
  readonly authenticator: Authenticator;
  readonly client: RunnableClient;
  readonly watch: RunnableWatch;
  /** How often an open change stream checks that its API key still works (revoked, expired, owner removed: the stream ends). */
  readonly authRecheckMs?: number;
  /** What a run report may claim; {@link DEFAULT_REPORT_BOUNDS} when absent. */
  readonly reportBounds?: ReportBounds;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }];
const tags = ['local evaluation'];
/** Times the pages of one answer are read again when the revision moved while they were read. */
const SNAPSHOT_ATTEMPTS = 3;

const VISIBILITY =
  'Same rights as runs: an API key with scope `view`. Named `bases` may be any live base of the org (as `POST /run/policy/{baseId}` runs them); ' +
  '`group` and `all=true` select what the caller sees in lists (published bases, and never-published ones it created). ' +
  "The policies a selected flow's nodes name come along (`selected:false`), with the versions or records the flow pins.";

/**
 * Local evaluation: `GET /runnable` (what an SDK runtime runs, at the org's
 * revision), `GET /runnable/changes` (server-sent events announcing each new revision) and
 * `POST /runnable/reports` (its runs, turned into `executed` events).
 */
export const runnableRoutes: FastifyPluginAsyncZod<RunnableRoutesOptions> = async (
  app,
  { authenticator, client, watch, authRecheckMs = 5000, reportBounds = DEFAULT_REPORT_BOUNDS },
) => {
  authenticate(app, authenticator, 'api-key-only');
  const canView = requireCapability('view');
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end();
  });

  app.get('/runnable', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'The runnable records of a selection, at the org revision (for local evaluation)',
      description:
        'Each chosen base with the record a run of it runs (the latest published version, else the draft) and, for a policy, the records ' +
        "selected flows pin. `revision` is the org's runnable revision: it moves with every publish, delete, restore, edit of a " +
        'never-published draft and group membership change. With `since`, only the bases that changed after it (`full:false`, ' +
        'deleted ones in `removed`); a change of the selected group answers everything (`full:true`). The `ETag` names the revision: ' +
        `\`If-None-Match\` answers 304 while it holds. ${VISIBILITY}`,
      querystring: RunnableQuery,
      response: {
        200: RunnableSnapshot,
        304: z.undefined().describe('Not modified: the revision named by `If-None-Match` is current'),
        ...errorResponses(400, 401, 403, 404, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const { since, ...chosen } = request.query;
      const selection = selectionOf(chosen);
      const ctx = { requestId: request.id };
      const tagOf = etagOf(selection, since);
      const ifNoneMatch = request.headers['if-none-match'];
      if (typeof ifNoneMatch === 'string') {
        const tag = tagOf(await client.revision(principal, ctx));
        if (ifNoneMatch.split(',').some((t) => t.trim() === tag || t.trim() === `W/${tag}`)) {
          return reply.status(304).header('etag', tag).send(undefined);
        }
      }
      const snapshot = await readSnapshot(client, principal, selection, since, ctx);
      return reply.header('etag', tagOf(snapshot.revision)).header('cache-control', 'no-cache').send(snapshot);
    },
  });

  app.get('/runnable/changes', {
    onRequest: canView,
    schema: {
      tags,
      security,
      summary: "Server-sent events announcing each new runnable revision of the caller's org",
      description:
        '`text/event-stream`. `event: revision` with `{"revision": N}` whenever the org revision grows past the one held (`since`) — then ' +
        '`GET /runnable?since=<held>` fetches what changed; at once when it is already past `since`. `event: ping` with the current ' +
        '`{"revision": N}` every `heartbeatMs` while nothing changes. `event: error` with a problem document, then the end, when the API key ' +
        'stops working (revoked, expired, owner removed): the stream checks it every few seconds. On a disconnect, reconnect with the revision held.',
      querystring: RunnableChangesQuery,
      response: {
        200: {
          description: 'Server-sent events: `revision` and `ping` with `{"revision": N}`, `error` with a problem document',
          content: {
            'text/event-stream': { schema: z.string().describe('`event: <name>` and `data: <JSON>` lines, a blank line after each event') },
          },
        },
        ...errorResponses(400, 401, 403, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const { since, heartbeatMs } = request.query;
      const raw = reply.raw;
      let sent = since;
      const write = (event: string, data: unknown) => {
        if (!raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      const announce = (revision: number) => {
        if (revision <= sent) return;
        sent = revision;
        write('revision', { revision });
      };
      // Subscribed before answering: a registry that cannot be reached is a 503, not a silent stream.
      const watched = await watch.watch(principal, announce);
      reply.hijack();
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        [REQUEST_ID_HEADER]: request.id,
      });
      let ended = false;
      const heartbeat = setInterval(() => write('ping', { revision: watch.latest(principal.orgId) ?? sent }), heartbeatMs);
      const recheck = setInterval(() => void stillAllowed(), authRecheckMs);
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        clearInterval(recheck);
        watched.stop();
        streams.delete(end);
        if (!raw.writableEnded) raw.end();
      };
      streams.add(end);
      request.raw.on('close', end);
      const stillAllowed = async () => {
        try {
          const again = await reauthenticate(authenticator, request);
          if (!hasCapability(again, 'view')) throw new ArbiterError('forbidden', 'the caller no longer has the `view` right');
        } catch (err) {
          const problem = toArbiterError(err);
          // An outage is not a verdict on the key: only credential answers end the stream.
          if (problem.status !== 401 && problem.status !== 403) return;
          write('error', problemOf(problem, request.id));
          end();
        }
      };
      raw.write(': arbiter runnable changes\n\n');
      announce(watched.revision);
      write('ping', { revision: Math.max(sent, watched.revision) });
    },
  });

  app.post('/runnable/reports', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: "Report a local runtime's runs: they become `executed` audit events",
      description:
        'Counts per record (total, true, false, error, custom outcomes) over a window, each turned into one `executed` event like the execution ' +
        'service\'s (`via: ["sdk"]`, the caller as actor). Records not in the caller\'s org are left out (`ignored`). Sending the same `reportId` ' +
        'again within a day adds nothing, so a report whose answer was lost can be retried. Each event is dated when the report is received; ' +
        'the window (`from`, `to`) is kept in its details, and each window of a record is its own event. A report claiming what its runtime cannot ' +
        'have run is refused whole (400 `validation_failed`, before anything is recorded): a window starting before the API key in use was made ' +
        '(`before_key_created`) or ending in the future (`in_future`), both give or take `RUN_REPORT_CLOCK_SKEW_MS` (5 minutes), or a count above ' +
        "the window's seconds (at least 1) times `RUN_REPORT_MAX_RUNS_PER_SECOND` (100,000) (`too_many_runs`).",
      body: RunReport,
      response: { 200: RunReportReply, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request) => {
      const principal = principalOf(request);
      checkReportBounds(principal, request.body, reportBounds);
      return client.report(principal, request.body, { requestId: request.id });
    },
  });
};

/** The selection named by a query; at least one of `bases`, `group`, `all=true`. */
function selectionOf(q: { bases?: string[] | undefined; group?: string | undefined; all?: boolean | undefined }): RunnableSelection {
  const selection: RunnableSelection = {
    ...(q.bases !== undefined ? { bases: q.bases } : {}),
    ...(q.group !== undefined ? { group: q.group } : {}),
    ...(q.all === true ? { all: true } : {}),
  };
  if (Object.keys(selection).length === 0) {
    throw new ArbiterError('validation_failed', 'choose what to load: `bases`, `group` or `all=true`', [
      { code: 'required', message: 'one of `bases`, `group`, `all=true` is required', path: 'querystring' },
    ]);
  }
  return selection;
}

/** The entity tag of an answer to this selection (and `since`) at a revision. */
function etagOf(selection: RunnableSelection, since: number | undefined): (revision: number) => string {
  const key = JSON.stringify([[...(selection.bases ?? [])].sort(), selection.group ?? null, selection.all ?? false, since ?? null]);
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return (revision) => `"r${revision}-${hash}"`;
}

/**
 * Reads every page of a snapshot. Pages are read one after the other: when the revision moved
 * meanwhile, they are read again (a few times); after that the answer names the oldest revision
 * read, so the runtime's next `since` fetches again whatever moved.
 */
async function readSnapshot(
  client: RunnableClient,
  principal: Principal,
  selection: RunnableSelection,
  since: number | undefined,
  ctx: { requestId: string },
): Promise<RunnableSnapshot> {
  let pages: RunnableSnapshotPage[] = [];
  for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
    pages = [];
    let cursor: string | undefined;
    do {
      const page = await client.snapshotPage(
        principal,
        { selection, ...(since !== undefined ? { since } : {}), ...(cursor ? { cursor } : {}) },
        ctx,
      );
      pages.push(page);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    if (pages.every((p) => p.revision === pages[0].revision && p.full === pages[0].full)) break;
  }
  const first = pages[0];
  return {
    revision: Math.min(...pages.map((p) => p.revision)),
    full: pages.some((p) => p.full),
    bases: pages.flatMap((p) => p.bases),
    removed: first.removed,
    missing: first.missing,
    limits: first.limits,
  };
}

/** The caller's principal as its API key gives it now (counted like any request of the key). */
async function reauthenticate(authenticator: Authenticator, request: FastifyRequest): Promise<Principal> {
  const key = request.headers['x-api-key'];
  if (typeof key !== 'string') throw new ArbiterError('unauthenticated', 'this endpoint requires an API key in the `x-api-key` header');
  return (await authenticator.byApiKey(key, request.ip)).principal;
}
