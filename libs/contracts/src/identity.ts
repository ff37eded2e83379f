import { z } from 'zod';
import { PageQuery, pageOf, QueryFlag } from './http.js';
import { Role, Scope } from './principal.js';

/** An organization id: a short lowercase slug such as `default` or `acme`. */
export const OrgId = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a lowercase slug of letters, digits and dashes (max 63)');
export type OrgId = z.infer<typeof OrgId>;

/** A user id: the identity provider's `sub`, 1–255 printable characters without spaces. */
export const UserId = z.string().regex(/^[^\s\p{Cc}]{1,255}$/u, 'must be 1–255 characters without spaces or control characters');
export type UserId = z.infer<typeof UserId>;

/** Response of `GET /me`. `apiKeyId` and `scopes` are present when the caller used an API key. */
export const MeResponse = z.object({
  orgId: z.string(),
  userId: z.string(),
  role: Role,
  apiKeyId: z.uuid().optional(),
  scopes: z.array(Scope).optional(),
});
export type MeResponse = z.infer<typeof MeResponse>;

/** A member of an organization, as listed by `GET /users`. */
export const Member = z.object({
  userId: z.string(),
  role: Role,
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Member = z.infer<typeof Member>;

/** Response of `GET /users`. */
export const MemberPage = pageOf(Member);
export type MemberPage = z.infer<typeof MemberPage>;

/** Body of `PUT /users/{userId}`. Unknown keys are rejected. */
export const PutMemberRequest = z.strictObject({ role: Role });
export type PutMemberRequest = z.infer<typeof PutMemberRequest>;

/** Body of `POST /apikeys` and `POST /users/{userId}/apikeys`. Unknown keys are rejected. */
export const CreateApiKeyRequest = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('A label to recognise the key by'),
  scopes: z
    .array(Scope)
    .min(1)
    .refine((s) => new Set(s).size === s.length, 'must not repeat a scope')
    .describe('Rights of the key; never more than the owner role allows'),
  expiresAt: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'When the key stops working (ISO 8601). Absent: never, or, when created with an API key, when that key expires (a key never outlives the key that made it)',
    ),
});
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** An API key as listed by `GET /apikeys`; the secret is never shown again. */
export const ApiKey = z.object({
  apiKeyId: z.uuid(),
  name: z.string(),
  scopes: z.array(Scope),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  createdWithKeyId: z
    .uuid()
    .nullable()
    .describe('The API key this key was created (or issued) with; null when made with a bearer token or the admin command line'),
  owner: z.string().describe('The user the key acts as'),
  lastUsedAt: z.iso
    .datetime()
    .nullable()
    .describe('When the key last authenticated a request (written every `KEY_USAGE_FLUSH_MS`); null when never'),
});
export type ApiKey = z.infer<typeof ApiKey>;

/** Query of `GET /apikeys`: a page, of the caller's own keys or (`all=true`, admin) of every key of the org. */
export const ApiKeyListQuery = PageQuery.extend({
  all: QueryFlag.optional().describe('`true`: every key of the org, whoever owns it (admin)'),
});
export type ApiKeyListQuery = z.infer<typeof ApiKeyListQuery>;

/** Response of `POST /apikeys` and `POST /users/{userId}/apikeys`: the only answers that contain the secret `key`. */
export const CreatedApiKey = ApiKey.extend({ key: z.string().describe('The secret; shown only once') });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

/** Response of `GET /apikeys`. */
export const ApiKeyPage = pageOf(ApiKey);
export type ApiKeyPage = z.infer<typeof ApiKeyPage>;

/** The least coverage percent an org's saved tests must reach for a publish or a submission for review: an integer from 0 (no minimum) to 100. */
export const MinCoverage = z
  .number()
  .int()
  .min(0)
  .max(100)
  .describe(
    'Publishing (and, with governance approval, submitting for review) is refused with 422 `coverage_below_minimum` while the saved tests cover less than this percent; 0 (the default) never refuses',
  );

/** Organization settings (`GET /org/settings`, and the answer of `PUT`). */
export const OrgSettings = z.strictObject({
  governanceApproval: z.boolean().describe('Publishing needs an approved review when true'),
  minCoverage: MinCoverage,
});
export type OrgSettings = z.infer<typeof OrgSettings>;

/** Body of `PUT /org/settings`: `minCoverage` left out keeps its current value. Unknown keys are rejected. */
export const OrgSettingsBody = OrgSettings.extend({ minCoverage: MinCoverage.optional() });
export type OrgSettingsBody = z.infer<typeof OrgSettingsBody>;
