import { Readable } from 'node:stream';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ExportSection, isArbiterError, type ExportPage } from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RegistryClient } from '../clients/registry-client.js';

/** Dependencies of {@link exportRoutes}. */
export interface ExportRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/**
 * `GET /export` (admin): the org's live policies and flows (every version and the
 * draft, with their tests and schemas) and its groups as one JSON bundle, streamed from pages of
 * the registry so that neither side holds the whole org. Pages are bounded by bytes as well as by
 * count; a base bigger than a page comes in parts (its records over several pages), joined here.
 */
export const exportRoutes: FastifyPluginAsyncZod<ExportRoutesOptions> = async (app, { authenticator, registry }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  app.get('/export', {
    onRequest: requireCapability('admin'),
    schema: {
      tags: ['export'],
      security,
      summary: "The org's policies, flows and groups as one JSON bundle (admin)",
      description:
        '`{format: "arbiter-bundle", formatVersion: 1, orgId, exportedAt, policies, flows, groups}`: each policy or flow base ' +
        'with every record (versions oldest first, then the draft; content, tests, schema, authors), each group with its live ' +
        'members. Deleted bases are left out. Streamed: a registry failure after the first byte ends the body early (not valid ' +
        'JSON), so read it whole before importing it.',
      querystring: z.strictObject({}),
      response: {
        200: z.unknown().describe('application/json: the bundle (see `Bundle` in libs/contracts/src/bundle.ts)'),
        ...errorResponses(401, 403, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const ctx = { requestId: request.id };
      // The first page is fetched before answering, so an unavailable registry is a 503, not a broken 200.
      const first = await registry.exportPage(principal, 'policies', undefined, ctx);
      const head = { format: 'arbiter-bundle', formatVersion: 1, orgId: principal.orgId, exportedAt: new Date().toISOString() };
      async function* chunks(): AsyncGenerator<string> {
        yield JSON.stringify(head).slice(0, -1);
        for (const section of ExportSection.options) {
          yield `,${JSON.stringify(section)}:[`;
          let page: ExportPage = section === 'policies' ? first : await registry.exportPage(principal, section, undefined, ctx);
          let sep = '';
          // The base whose `records` array is still open: a page may end inside a big base, and the
          // next page starts with the rest of its records (same `baseId`).
          let open: string | null = null;
          for (;;) {
            for (const item of page.items) {
              if (!('baseId' in item)) {
                yield sep + JSON.stringify(item);
              } else if (item.baseId === open) {
                for (const record of item.records) yield `,${JSON.stringify(record)}`;
              } else {
                const { records, ...base } = item;
                yield `${open !== null ? ']}' : ''}${sep}${JSON.stringify(base).slice(0, -1)},"records":[`;
                yield records.map((record) => JSON.stringify(record)).join(',');
                open = item.baseId;
              }
              sep = ',';
            }
            if (page.nextCursor === null) break;
            page = await registry.exportPage(principal, section, page.nextCursor, ctx);
          }
          yield open !== null ? ']}]' : ']';
        }
        yield '}';
      }
      const stream = Readable.from(chunks(), { objectMode: false });
      stream.on('error', (err) => request.log.warn({ err, arbiter: isArbiterError(err) }, 'export ended early'));
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="arbiter-${principal.orgId}.json"`)
        .send(stream);
    },
  });
};
