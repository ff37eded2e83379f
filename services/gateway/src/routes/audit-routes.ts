import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  AUDIT_MAX_PAGE,
  AuditEvent,
  AuditEventPage,
  AuditExportQuery,
  AuditQuery,
  isArbiterError,
  type AuditEventPage as Page,
} from '@arbiter/contracts';
import { z } from 'zod';
import type { AuditClient } from '../clients/audit-client.js';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';

/** Dependencies of {@link auditRoutes}. */
export interface AuditRoutesOptions {
  readonly authenticator: Authenticator;
  readonly audit: AuditClient;
}

/** One line of `GET /audit/export`. */
const AuditExportLine = z.union([
  AuditEvent,
  z.object({ error: z.object({ code: z.string(), status: z.number().int(), detail: z.string(), instance: z.string() }) }),
]);

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];
const tags = ['audit'];
const description =
  'Admins and auditors (a key needs the `audit` scope); only the caller org. Filters combine with AND; `kind` may be repeated. ' +
  '`executed` events are aggregated by the execution service: one per caller, resource and batch window, with `details.count`.';

/**
 * The audit trail (docs/api.md#audit-trail, docs/design/events-and-audit.md): `GET /audit` pages it newest first, `GET /audit/export`
 * streams the same filter as NDJSON (paging over the bus). When no audit service answers, these two
 * routes are 503; nothing else depends on it.
 */
export const auditRoutes: FastifyPluginAsyncZod<AuditRoutesOptions> = async (app, { authenticator, audit }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  const canAudit = requireCapability('audit');

  app.get('/audit', {
    onRequest: canAudit,
    schema: {
      tags,
      security,
      summary: 'Audit events of the caller org, newest first',
      description,
      querystring: AuditQuery,
      response: { 200: AuditEventPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => audit.query(principalOf(request), request.query, { requestId: request.id }),
  });

  app.get('/audit/export', {
    onRequest: canAudit,
    schema: {
      tags,
      security,
      summary: 'Every audit event of the filter as NDJSON (one event per line, newest first)',
      description: `${description} A failure after the first line ends the stream with a line \`{"error": <problem>}\`.`,
      querystring: AuditExportQuery,
      response: {
        200: {
          description:
            'One JSON value per line: an audit event (as in `GET /audit`), or a last line `{"error": <problem>}` when the export failed midway',
          content: { 'application/x-ndjson': { schema: AuditExportLine } },
        },
        ...errorResponses(400, 401, 403, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const ctx = { requestId: request.id };
      const page = (cursor?: string) => audit.query(principal, { ...request.query, limit: AUDIT_MAX_PAGE, cursor }, ctx);
      // The first page is fetched before answering, so an unavailable audit service is a 503, not an empty 200.
      const first = await page();
      async function* lines(): AsyncGenerator<string> {
        let current: Page = first;
        for (;;) {
          if (current.items.length > 0) yield current.items.map((e) => JSON.stringify(e)).join('\n') + '\n';
          if (current.nextCursor === null) return;
          try {
            current = await page(current.nextCursor);
          } catch (err) {
            request.log.warn({ err }, 'audit export ended early');
            const error = isArbiterError(err)
              ? { code: err.code, status: err.status, detail: err.message }
              : { code: 'internal', status: 500, detail: 'internal error' };
            yield JSON.stringify({ error: { ...error, instance: request.id } }) + '\n';
            return;
          }
        }
      }
      return (
        reply
          .type('application/x-ndjson')
          .header('content-disposition', 'attachment; filename="audit.ndjson"')
          // A stream: the declared line schema documents it, nothing serializes it.
          .send(Readable.from(lines(), { objectMode: false }) as never)
      );
    },
  });
};
