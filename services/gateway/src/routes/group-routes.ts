import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  AddGroupMemberBody,
  CreateGroupBody,
  FlowSummaryPage,
  Group,
  GroupMember,
  GroupPage,
  ListQuery,
  PolicySummaryPage,
  RecordIdParam,
  UpdateGroupBody,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { GroupsClient } from '../clients/registry-client.js';

/** Dependencies of {@link groupRoutes}. */
export interface GroupRoutesOptions {
  readonly authenticator: Authenticator;
  readonly groups: GroupsClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }];
const tags = ['groups'];
const GroupParams = z.object({ groupId: RecordIdParam });
const MemberParams = z.object({ groupId: RecordIdParam, memberId: RecordIdParam });
/** The member lists page like the other lists but do not search by name. */
const MemberListQuery = ListQuery.omit({ q: true });

/**
 * Groups of policy and flow bases (docs/api.md#policies-and-flows): API key or bearer JWT. Groups are
 * org-wide; editors and up create them; the creator or an admin changes them and their members
 * (decided by the registry). The member lists never show deleted bases.
 */
export const groupRoutes: FastifyPluginAsyncZod<GroupRoutesOptions> = async (app, { authenticator, groups }) => {
  authenticate(app, authenticator, 'api-key-or-bearer');
  const canView = requireCapability('view');
  const canEdit = requireCapability('edit');
  const ctx = (request: { id: string }) => ({ requestId: request.id });

  app.post('/group', {
    onRequest: canEdit,
    schema: {
      tags,
      security,
      summary: 'Create a group (editor and up)',
      body: CreateGroupBody,
      response: { 201: Group, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) => reply.status(201).send(await groups.create(principalOf(request), request.body, ctx(request))),
  });

  app.get('/group/:groupId', {
    onRequest: canView,
    schema: {
      tags,
      security,
      summary: 'Group metadata',
      params: GroupParams,
      response: { 200: Group, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => groups.get(principalOf(request), request.params.groupId, ctx(request)),
  });

  app.put('/group/:groupId', {
    onRequest: canEdit,
    schema: {
      tags,
      security,
      summary: 'Change the name or description of a group (its creator or an admin)',
      params: GroupParams,
      body: UpdateGroupBody,
      response: { 200: Group, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 503, 504) },
    },
    handler: async (request) => groups.update(principalOf(request), request.params.groupId, request.body, ctx(request)),
  });

  app.delete('/group/:groupId', {
    onRequest: canEdit,
    schema: {
      tags,
      security,
      summary: 'Delete a group and its membership records (its creator or an admin)',
      description: 'The member policies and flows themselves are not touched.',
      params: GroupParams,
      response: { 204: z.undefined().describe('Deleted'), ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      await groups.remove(principalOf(request), request.params.groupId, ctx(request));
      return reply.status(204).send();
    },
  });

  app.get('/groups', {
    onRequest: canView,
    schema: {
      tags,
      security,
      summary: 'List the groups of the caller org, newest first',
      querystring: ListQuery,
      response: { 200: GroupPage, ...errorResponses(400, 401, 403, 429, 503, 504) },
    },
    handler: async (request) => groups.list(principalOf(request), request.query, ctx(request)),
  });

  app.post('/group/:groupId/member', {
    onRequest: canEdit,
    schema: {
      tags,
      security,
      summary: 'Add a policy base or a flow base to a group (its creator or an admin)',
      description: '`memberId` is a base id. A base already in the group is 409; an unknown or deleted base is 404.',
      params: GroupParams,
      body: AddGroupMemberBody,
      response: { 201: GroupMember, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 503, 504) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await groups.addMember(principalOf(request), request.params.groupId, request.body, ctx(request))),
  });

  app.delete('/group/:groupId/member/:memberId', {
    onRequest: canEdit,
    schema: {
      tags,
      security,
      summary: 'Remove a policy base or a flow base from a group (its creator or an admin)',
      params: MemberParams,
      response: { 204: z.undefined().describe('Removed'), ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      await groups.removeMember(principalOf(request), request.params.groupId, request.params.memberId, ctx(request));
      return reply.status(204).send();
    },
  });

  app.get('/group/:groupId/policies', {
    onRequest: canView,
    schema: {
      tags,
      security,
      summary: 'List the policies of a group the caller sees (never deleted ones)',
      params: GroupParams,
      querystring: MemberListQuery,
      response: { 200: PolicySummaryPage, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => groups.policies(principalOf(request), request.params.groupId, request.query, ctx(request)),
  });

  app.get('/group/:groupId/flows', {
    onRequest: canView,
    schema: {
      tags,
      security,
      summary: 'List the flows of a group the caller sees (never deleted ones)',
      params: GroupParams,
      querystring: MemberListQuery,
      response: { 200: FlowSummaryPage, ...errorResponses(400, 401, 403, 404, 429, 503, 504) },
    },
    handler: async (request) => groups.flows(principalOf(request), request.params.groupId, request.query, ctx(request)),
  });
};
