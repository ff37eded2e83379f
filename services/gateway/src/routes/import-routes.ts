import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ArbiterError, IMPORT_MAX_BYTES, ImportBundle, ImportQuery, ImportReply } from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RegistryClient } from '../clients/registry-client.js';

/** Dependencies of {@link importRoutes}. */
export interface ImportRoutesOptions {
  readonly authenticator: Authenticator;
  readonly registry: RegistryClient;
  /** Whether the org's `governanceApproval` setting is on (published versions then enter only through review). */
  readonly governanceApproval: (orgId: string) => Promise<boolean>;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

const tooLarge = (bytes: number | string): ArbiterError =>
  new ArbiterError(
    'payload_too_large',
    `the bundle is ${bytes} bytes: an import takes at most ${IMPORT_MAX_BYTES} bytes (it crosses the bus in one message). ` +
      'Import it in parts (e.g. the policies first, then the flows and groups): flow nodes and group members that name ' +
      'a base by its `baseId` resolve to a base imported from the same org by an earlier part',
  );

/**
 * `POST /import` (admin): loads a bundle of `GET /export` into the caller's org,
 * or with `?dryRun=true` answers what it would do. The registry plans and loads it in one
 * transaction; the body is refused above {@link IMPORT_MAX_BYTES} (413) before it is read.
 */
export const importRoutes: FastifyPluginAsyncZod<ImportRoutesOptions> = async (app, { authenticator, registry, governanceApproval }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  app.post(
    '/import',
    {
      bodyLimit: IMPORT_MAX_BYTES,
      onRequest: [
        requireCapability('admin'),
        async (request) => {
          const length = Number(request.headers['content-length']);
          if (Number.isFinite(length) && length > IMPORT_MAX_BYTES) throw tooLarge(length);
        },
      ],
      schema: {
        tags: ['export'],
        security,
        summary: "Load a bundle of `GET /export` into the caller's org, or plan it (`dryRun=true`) (admin)",
        description:
          'Each base and group of the bundle is `create`d with new ids (references of flows and group members follow), ' +
          '`unchanged` (imported before from the same org at the same latest version, or the same org importing its own ' +
          'bundle) or a `conflict` (an earlier import at another version; a flow naming a policy that is neither imported ' +
          'nor in the org; a group member not imported). Names are not compared: as at create, two bases or groups may share ' +
          'a name, so every export imports into an empty org. A dry run changes nothing. A real import with any conflict ' +
          'is 409 with every conflict in `errors` and changes nothing; else one transaction. Version numbers, statuses, ' +
          "tests, schemas and the records' authors and times are kept; the importer owns the new bases and groups. " +
          'A bundle that uses a record id twice, lists a group member twice or numbers a version past 1,000,000,000 is 400 (`errors` names each). ' +
          'Every published version created runs the publish checks (rule parses, schema holds the paths it reads, saved tests pass): 422 `cannot_publish` ' +
          'with every reason, nothing imported. In an org with governance approval on, a base with published versions to create is a conflict ' +
          '(409 on import, `conflict` in a dry run): versions enter such an org only through review. An admin who trusts the bundle ' +
          'turns governance off for the import (audited as `settings changed`) and on again. ' +
          `At most ${IMPORT_MAX_BYTES} bytes (413 beyond: import in parts).`,
        querystring: ImportQuery,
        body: ImportBundle,
        response: {
          200: ImportReply,
          ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429, 503, 504),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const governed = await governanceApproval(principal.orgId);
      return registry.importBundle(principal, request.body, request.query.dryRun, { requestId: request.id, governed });
    },
  );
};
