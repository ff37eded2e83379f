import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ApiKeyListQuery,
  ApiKeyPage,
  CreateApiKeyRequest,
  CreatedApiKey,
  Member,
  MemberPage,
  MeResponse,
  OrgSettings,
  OrgSettingsBody,
  PageQuery,
  PutMemberRequest,
  UserId,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability, withFreshGrant } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { IdentityService } from '../identity/identity-service.js';

/** Dependencies of {@link identityRoutes}. */
export interface IdentityRoutesOptions {
  readonly authenticator: Authenticator;
  readonly identity: IdentityService;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];

/** `/me`, `/users` (with a member's keys), `/apikeys` and `/org/settings` (docs/design/identity.md): API key or bearer JWT. */
export const identityRoutes: FastifyPluginAsyncZod<IdentityRoutesOptions> = async (app, { authenticator, identity }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  const isAdmin = requireCapability('admin');

  app.get('/me', {
    schema: {
      tags: ['identity'],
      security,
      summary: 'The caller: org, user, role, and the API key with its scopes when one was used',
      response: { 200: MeResponse, ...errorResponses(401, 429) },
    },
    handler: async (request) => identity.me(principalOf(request)),
  });

  app.get('/users', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'List the members of the caller org (admin)',
      querystring: PageQuery,
      response: { 200: MemberPage, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => identity.listMembers(principalOf(request), request.query),
  });

  app.get('/users/:userId', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'One member of the caller org (admin)',
      params: z.object({ userId: UserId }),
      response: { 200: Member, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => identity.getMember(principalOf(request), request.params.userId),
  });

  app.delete('/users/:userId', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'Remove a member from the caller org and revoke their API keys (admin)',
      description:
        'The keys stop working on the very next request on every replica. The last admin cannot be removed (409). ' +
        "The removal sticks: the user's bearer tokens get 403 instead of signing them in again as a viewer, until an admin adds them back (`PUT /users/{userId}`). " +
        'Events: `member removed`, and `key revoked` for each key.',
      params: z.object({ userId: UserId }),
      response: { 204: z.undefined().describe('Removed'), ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
    },
    handler: async (request, reply) => {
      await identity.removeMember(principalOf(request), request.params.userId);
      return reply.status(204).send();
    },
  });

  app.put('/users/:userId', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'Set the role of a member, adding the user when new (admin)',
      description:
        '201 when the member was added, 200 when the role was changed. The last admin cannot be demoted (409). ' +
        'Adding a removed user back lets their bearer tokens in again.',
      params: z.object({ userId: UserId }),
      body: PutMemberRequest,
      response: { 200: Member, 201: Member, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
    },
    handler: async (request, reply) => {
      const { member, created } = await identity.setRole(principalOf(request), request.params.userId, request.body.role);
      return reply.status(created ? 201 : 200).send(member);
    },
  });

  app.get('/users/:userId/apikeys', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'List the API keys of a member of the caller org that are not revoked (admin); never the secrets',
      params: z.object({ userId: UserId }),
      querystring: PageQuery,
      response: { 200: ApiKeyPage, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => identity.listMemberKeys(principalOf(request), request.params.userId, request.query),
  });

  app.post('/users/:userId/apikeys', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'Issue an API key owned by a member of the caller org (admin); the secret `key` is shown only in this answer',
      description:
        'How a user without an identity provider gets a first key. The scopes must be within the member role ' +
        '(and within the rights of the caller), else 403; a user who is not a member of the caller org is 404. ' +
        'The issued key belongs to the member and stands alone: revoking or expiring the issuing key leaves it working. ' +
        'Past `APIKEYS_PER_USER_MAX` live keys of the member: 409 `too_many_api_keys`. Event: `key created`, ' +
        'with the issuer as actor and in `details.issuedBy`.',
      params: z.object({ userId: UserId }),
      body: CreateApiKeyRequest,
      response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await identity.issueKey(principalOf(request), request.params.userId, request.body)),
  });

  app.post('/apikeys', {
    schema: {
      tags: ['identity'],
      security,
      summary: 'Create a personal API key; the secret `key` is shown only in this answer',
      description:
        'Scopes beyond the caller rights (role, and the scopes of the key in use) are refused with 403. ' +
        'Past `APIKEYS_PER_USER_MAX` live keys of the caller: 409 `too_many_api_keys`.',
      body: CreateApiKeyRequest,
      response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await withFreshGrant(request, authenticator, (p) => identity.createKey(p, request.body))),
  });

  app.get('/apikeys', {
    schema: {
      tags: ['identity'],
      security,
      summary: 'List the caller own API keys that are not revoked, or with `all=true` every key of the org (admin); never the secrets',
      querystring: ApiKeyListQuery,
      response: { 200: ApiKeyPage, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const { all, ...page } = request.query;
      return identity.listKeys(principalOf(request), page, { all: all === true });
    },
  });

  app.delete('/apikeys/:apiKeyId', {
    schema: {
      tags: ['identity'],
      security,
      summary: 'Revoke an API key: your own, or any key of your org as an admin',
      description: 'Takes effect on the very next request on every replica. A key of another org is 404.',
      params: z.object({ apiKeyId: z.uuid() }),
      response: { 204: z.undefined().describe('Revoked'), ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      await identity.revokeKey(principalOf(request), request.params.apiKeyId);
      return reply.status(204).send();
    },
  });

  app.get('/org/settings', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'Settings of the caller org (admin)',
      response: { 200: OrgSettings, ...errorResponses(401, 403, 429) },
    },
    handler: async (request) => identity.getSettings(principalOf(request)),
  });

  app.put('/org/settings', {
    onRequest: isAdmin,
    schema: {
      tags: ['identity'],
      security,
      summary: 'Replace the settings of the caller org (admin)',
      description:
        '`governanceApproval`: publishing needs an approved review. `minCoverage` (an integer from 0 to 100, default 0; left out keeps its value): ' +
        'a publish, or with governance approval a submission for review, whose saved tests cover less than this percent is refused with 422 ' +
        '`coverage_below_minimum`. 400 for a value out of bounds or an unknown key.',
      body: OrgSettingsBody,
      response: { 200: OrgSettings, ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
    handler: async (request) => identity.putSettings(principalOf(request), request.body),
  });
};
