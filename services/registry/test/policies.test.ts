import {
  DeleteBaseReply,
  Group,
  GroupMember,
  PolicyDraftReply,
  PolicyRecord,
  PolicyRecordPage,
  PolicySummaryPage,
  PolicyUpdateReply,
  RegistrySubject as S,
  RunnableBaseEntry,
  PolicyRecordEntry,
  runnableBaseKey,
  runnableRecordKey,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const editor = as('editor');
const colleague = as('editor', { userId: 'colleague' });
const publisher = as('publisher');
const admin = as('admin');

const create = (principal = editor, body: Record<string, unknown> = {}) =>
  env.call(S.policyCreate, { principal, name: 'Adult check', rule: ADULT_RULE, ...body }, PolicyRecord);
const publish = (id: string, principal = publisher, body: Record<string, unknown> = {}) =>
  env.call(S.policyUpdate, { principal, policyId: id, status: 'published', ...body }, PolicyUpdateReply);
const list = (principal = editor, query: Record<string, unknown> = {}) =>
  env.call(S.policyList, { principal, ...query }, PolicySummaryPage);
const baseEntry = async (baseId: string) =>
  RunnableBaseEntry.parse(JSON.parse((await env.redis.get(runnableBaseKey(env.prefix, 'policy', baseId)))!));
const recordEntry = async (id: string) =>
  PolicyRecordEntry.parse(JSON.parse((await env.redis.get(runnableRecordKey(env.prefix, 'policy', id)))!));

describe('drafts and versions', () => {
  it('creates a draft with the record shape of docs/api.md (policies and flows)', async () => {
    const draft = await create(editor, { description: 'd', tests: [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }] });
    expect(draft).toMatchObject({
      name: 'Adult check',
      description: 'd',
      rule: ADULT_RULE,
      schema: null,
      status: 'draft',
      version: null,
      basedOnVersion: null,
      createdBy: 'editor',
      updatedBy: 'editor',
      publishedAt: null,
      publishedBy: null,
    });
    expect(draft.policyId).not.toBe(draft.baseId);
    expect(await env.call(S.policyGet, { principal: as('viewer'), policyId: draft.policyId }, PolicyRecord)).toEqual({
      ...draft,
      groups: [],
    });
  });

  it('updates a draft with status draft, then publishes it as version 1, consuming the draft', async () => {
    const draft = await create();
    const edited = await env.call(
      S.policyUpdate,
      { principal: editor, policyId: draft.policyId, status: 'draft', description: 'new' },
      PolicyUpdateReply,
    );
    expect(edited.outcome).toBe('updated');
    expect(edited.record.description).toBe('new');
    const out = await publish(draft.policyId);
    expect(out.outcome).toBe('published');
    expect(out.record).toMatchObject({
      policyId: draft.policyId,
      baseId: draft.baseId,
      status: 'published',
      version: 1,
      publishedBy: 'publisher',
      description: 'new',
    });
    // Publishing consumed the draft: the base now holds exactly one record, version 1, under the draft's id.
    const versions = await env.call(S.policyVersions, { principal: editor, policyId: draft.policyId }, PolicyRecordPage);
    expect(versions.items.map((r) => [r.policyId, r.status, r.version])).toEqual([[draft.policyId, 'published', 1]]);
    expect(versions.nextCursor).toBeNull();
  });

  it('applies content fields before publishing in the same PUT', async () => {
    const draft = await create(publisher);
    const out = await publish(draft.policyId, publisher, { name: 'Renamed' });
    expect(out.record).toMatchObject({ name: 'Renamed', version: 1, updatedBy: 'publisher' });
  });

  it('GET draft on a version creates one (201) from that version, then returns the same draft (200)', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    const first = await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply);
    expect(first.created).toBe(true);
    expect(first.record).toMatchObject({ status: 'draft', basedOnVersion: 1, rule: v1.rule, baseId: v1.baseId });
    await env.call(
      S.policyUpdate,
      { principal: editor, policyId: first.record.policyId, status: 'draft', description: 'unsaved work' },
      PolicyUpdateReply,
    );
    const again = await env.call(S.policyDraft, { principal: colleague, policyId: v1.policyId }, PolicyDraftReply);
    expect(again.created).toBe(false);
    expect(again.record.policyId).toBe(first.record.policyId);
    expect(again.record.description).toBe('unsaved work');
    const v2 = await publish(first.record.policyId);
    expect(v2.record.version).toBe(2);
    const page = await env.call(S.policyVersions, { principal: as('viewer'), policyId: v1.policyId }, PolicyRecordPage);
    expect(page.items.map((r) => r.version)).toEqual([2, 1]);
  });

  it('versions accepts any record id, lists the draft first and pages with a cursor', async () => {
    let id = (await create()).policyId;
    for (let i = 0; i < 3; i++) {
      const v = await publish(id);
      id = (await env.call(S.policyDraft, { principal: editor, policyId: v.record.policyId }, PolicyDraftReply)).record.policyId;
    }
    const all = await env.call(S.policyVersions, { principal: editor, policyId: id }, PolicyRecordPage);
    expect(all.items.map((r) => r.version)).toEqual([null, 3, 2, 1]);
    const byOldVersion = await env.call(S.policyVersions, { principal: editor, policyId: all.items[3].policyId }, PolicyRecordPage);
    expect(byOldVersion).toEqual(all);
    const seen: (number | null)[] = [];
    let cursor: string | undefined;
    do {
      const page: PolicyRecordPage = await env.call(
        S.policyVersions,
        { principal: editor, policyId: id, limit: 1, ...(cursor ? { cursor } : {}) },
        PolicyRecordPage,
      );
      seen.push(...page.items.map((r) => r.version));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([null, 3, 2, 1]);
  });

  it('a version never changes: PUT answers 409 version_immutable and the row stays as published', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    for (const status of ['draft', 'published'] as const) {
      const err = await env.fail(S.policyUpdate, { principal: admin, policyId: v1.policyId, status, rule: 'nonsense' });
      expect(err.code).toBe('version_immutable');
      expect(err.status).toBe(409);
    }
    expect(await env.call(S.policyGet, { principal: editor, policyId: v1.policyId }, PolicyRecord)).toEqual({ ...v1, groups: [] });
  });

  it('the database refuses UPDATE and DELETE of a published record (trigger)', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    await expect(env.sql('registry_records').where({ id: v1.policyId }).update({ rule: 'changed' })).rejects.toMatchObject({
      code: 'AR409',
    });
    await expect(env.sql('registry_records').where({ id: v1.policyId }).delete()).rejects.toMatchObject({ code: 'AR409' });
    expect((await env.call(S.policyGet, { principal: editor, policyId: v1.policyId }, PolicyRecord)).rule).toBe(ADULT_RULE);
  });

  it('the schema allows one draft per base and one record per version number', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    const draft = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    const row = await env.sql('registry_records').where({ id: draft.policyId }).first();
    const { randomUUID } = await import('node:crypto');
    await expect(env.sql('registry_records').insert({ ...row, id: randomUUID() })).rejects.toMatchObject({
      code: '23505',
      constraint: 'registry_records_one_draft',
    });
    await expect(
      env
        .sql('registry_records')
        .insert({ ...row, id: randomUUID(), status: 'published', version: 1, published_at: new Date(), published_by: 'x' }),
    ).rejects.toMatchObject({ code: '23505', constraint: 'registry_records_version_unique' });
  });

  it('GET by base id answers the current record: the draft before the first version, then the latest version', async () => {
    const draft = await create(editor, { name: 'By base' });
    expect(await env.call(S.policyGet, { principal: as('viewer'), policyId: draft.baseId }, PolicyRecord)).toEqual({
      ...draft,
      groups: [],
    });
    const v1 = (await publish(draft.policyId)).record;
    const next = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    expect(next.policyId).not.toBe(v1.policyId);
    expect(await env.call(S.policyGet, { principal: editor, policyId: draft.baseId }, PolicyRecord)).toEqual({ ...v1, groups: [] });
    const v2 = (await publish(next.policyId, publisher, { description: 'second' })).record;
    expect(v2.version).toBe(2);
    expect(await env.call(S.policyGet, { principal: editor, policyId: draft.baseId }, PolicyRecord)).toEqual({ ...v2, groups: [] });
    // other org, unknown base id, wrong role
    expect((await env.fail(S.policyGet, { principal: as('admin', { orgId: 'other' }), policyId: draft.baseId })).code).toBe('not_found');
    expect((await env.fail(S.policyGet, { principal: editor, policyId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' })).code).toBe('not_found');
    expect((await env.fail(S.flowGet, { principal: editor, flowId: draft.baseId })).code).toBe('not_found');
    expect((await env.fail(S.policyGet, { principal: as('editor', { scopes: ['edit'] }), policyId: draft.baseId })).code).toBe('forbidden');
    // a deleted base is gone by base id too
    await env.call(S.policyDelete, { principal: admin, policyId: v2.policyId }, DeleteBaseReply);
    expect((await env.fail(S.policyGet, { principal: admin, policyId: draft.baseId })).code).toBe('not_found');
  });

  it('rejects unknown body fields and answers 404 for ids that are not UUIDs', async () => {
    expect((await env.fail(S.policyCreate, { principal: editor, name: 'x', rule: ADULT_RULE, extra: 1 })).code).toBe('bad_request');
    expect((await env.fail(S.policyGet, { principal: editor, policyId: 'not-a-uuid' })).code).toBe('not_found');
  });
});

describe('publishing checks', () => {
  const schema = {
    type: 'object',
    properties: {
      applicant: { type: 'object', properties: { age: { type: 'integer' }, date_of_birth: { type: 'string', format: 'date' } } },
    },
  };

  it('publishes with a schema that holds every read path (key candidates: snake_case)', async () => {
    const rule =
      'An **applicant** is known if the __date of birth__ of the **applicant** is a valid date and the __age__ of the **applicant** is at least 0.';
    const draft = await create(editor, {
      rule,
      schema,
      tests: [{ name: 'ok', data: { applicant: { age: 3, date_of_birth: '2020-01-01' } }, expect: true }],
    });
    expect((await publish(draft.policyId)).record.version).toBe(1);
  });

  it('follows arrays through `items`', async () => {
    const rule = 'An **order** is cheap if any of the __items__ of the **order** satisfies (its __unit price__ is less than 10).';
    const arraySchema = {
      type: 'object',
      properties: {
        order: {
          type: 'object',
          properties: { items: { type: 'array', items: { type: 'object', properties: { unitPrice: { type: 'number' } } } } },
        },
      },
    };
    expect((await publish((await create(editor, { rule, schema: arraySchema })).policyId)).record.version).toBe(1);
    const noItems = { type: 'object', properties: { order: { type: 'object', properties: { items: { type: 'array' } } } } };
    const err = await env.fail(S.policyUpdate, {
      principal: publisher,
      policyId: (await create(editor, { rule, schema: noItems })).policyId,
      status: 'published',
    });
    expect(err.errors).toEqual([
      {
        code: 'schema_path_missing',
        message: 'the rule reads `order.items[].unit price` but the schema has no `order.items[]`',
        path: 'rule',
      },
    ]);
  });

  it('422 lists every reason (bad schema path, failing tests) and changes nothing, edits included', async () => {
    const rule =
      'An **applicant** is adult if the __age__ of the **applicant** is at least 18 and the __income__ of the **applicant** is greater than 0.';
    const tests = [
      { name: 'adult', data: { applicant: { age: 30, income: 1 } }, expect: true },
      { name: 'wrong expectation', data: { applicant: { age: 10, income: 1 } }, expect: true },
      { name: 'missing data', data: { applicant: { age: 30 } }, expect: true },
    ];
    const draft = await create(editor, {
      rule,
      schema: { type: 'object', properties: { applicant: { type: 'object', properties: { age: { type: 'integer' } } } } },
      tests,
    });
    const err = await env.fail(S.policyUpdate, {
      principal: admin,
      policyId: draft.policyId,
      status: 'published',
      name: 'Edited in the same PUT',
    });
    expect(err.code).toBe('cannot_publish');
    expect(err.status).toBe(422);
    expect(err.errors).toEqual([
      { code: 'schema_path_missing', message: 'the rule reads `applicant.income` but the schema has no `applicant.income`', path: 'rule' },
      { code: 'test_failed', message: 'test `wrong expectation`: expected `true`, got `false`', path: 'tests.1' },
      { code: 'test_failed', message: expect.stringMatching(/^test `missing data`: .*income/), path: 'tests.2' },
    ]);
    expect(await env.call(S.policyGet, { principal: editor, policyId: draft.policyId }, PolicyRecord)).toEqual({ ...draft, groups: [] });
  });

  it('422 for a rule that does not parse and an invalid schema, together', async () => {
    const draft = await create(editor, { rule: 'A **x** is a if the __y__ of the **x** is.' });
    // Saving refuses such a schema (400); a draft saved before that still cannot be published.
    await env
      .sql('registry_records')
      .where({ id: draft.policyId })
      .update({ schema: JSON.stringify({ type: 'object', properties: { x: { type: 'nope' } } }) });
    const err = await env.fail(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published' });
    expect(err.errors?.map((e) => e.code)).toEqual(['parse_error', 'invalid_schema']);
    expect(err.errors?.[0]?.message).toBe('Parse error: line 1, column 42: `is` needs a value, a list or a path after it');
    expect(err.errors?.[1]?.message).toMatch(/^not a valid JSON Schema \(2020-12\): /);
    expect((await env.call(S.policyGet, { principal: editor, policyId: draft.policyId }, PolicyRecord)).status).toBe('draft');
  });

  it('refuses on save a schema ajv cannot use: 400 with reason `schema_loop` or `invalid_schema`, nothing saved', async () => {
    for (const schema of [
      { $ref: '#' },
      { allOf: [{ $ref: '#' }] },
      { $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
    ]) {
      const err = await env.fail(S.policyCreate, { principal: editor, name: 'loop', rule: ADULT_RULE, schema });
      expect([err.status, err.errors?.[0]?.path, err.errors?.[0]?.message], JSON.stringify(schema)).toEqual([
        400,
        'schema',
        expect.stringContaining('refers back to itself without descending into the data'),
      ]);
    }
    for (const schema of [{ type: 'nope' }, { $ref: '#/$defs/none' }, { $schema: 'http://json-schema.org/draft-04/schema#' }]) {
      const err = await env.fail(S.policyCreate, { principal: editor, name: 'bad', rule: ADULT_RULE, schema });
      expect([err.code, err.errors], JSON.stringify(schema)).toEqual([
        'validation_failed',
        [expect.objectContaining({ code: 'invalid_schema', path: 'schema' })],
      ]);
    }
    const d = await create(editor, {});
    const edit = await env.fail(S.policyUpdate, { principal: editor, policyId: d.policyId, status: 'draft', schema: { type: 'nope' } });
    expect(edit.code).toBe('validation_failed');
    expect((await env.call(S.policyGet, { principal: editor, policyId: d.policyId }, PolicyRecord)).schema).toBeNull();
    // a recursive schema that descends into the data is fine
    const tree = { type: 'object', properties: { applicant: { type: 'object' }, children: { type: 'array', items: { $ref: '#' } } } };
    expect((await create(editor, { schema: tree })).schema).toEqual(tree);
  });

  it('422, never 500, when publishing a draft saved with a looping schema before it was refused', async () => {
    const d = await create(editor, { tests: [{ name: 'adult', data: { applicant: { age: 30 } }, expect: true }] });
    await env
      .sql('registry_records')
      .where({ id: d.policyId })
      .update({ schema: JSON.stringify({ $ref: '#' }) });
    const err = await env.fail(S.policyUpdate, { principal: publisher, policyId: d.policyId, status: 'published' });
    expect([err.status, err.code]).toEqual([422, 'cannot_publish']);
    expect(err.errors).toEqual([
      { code: 'invalid_schema', message: 'the schema refers back to itself without descending into the data (`#` → `#`)', path: 'schema' },
    ]);
  });

  it('422 when the rule has several golden rules', async () => {
    const rule = 'A **x** is a if the __y__ of the **x** is 1.\nA **x** is b if the __y__ of the **x** is 2.';
    const err = await env.fail(S.policyUpdate, {
      principal: publisher,
      policyId: (await create(editor, { rule })).policyId,
      status: 'published',
    });
    expect(err.errors).toEqual([{ code: 'parse_error', message: expect.stringContaining('multiple golden rules'), path: 'rule' }]);
  });

  it('accepts draft-07 schemas by `$schema` and refuses other dialects', async () => {
    const d7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { applicant: { properties: { age: {} } } },
    };
    expect((await publish((await create(editor, { schema: d7 })).policyId)).record.version).toBe(1);
    const d4 = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' };
    const err = await env.fail(S.policyCreate, { principal: editor, name: 'd4', rule: ADULT_RULE, schema: d4 });
    expect([err.code, err.errors?.map((e) => e.code)]).toEqual(['validation_failed', ['invalid_schema']]);
  });

  it('a saved test whose data breaks the schema fails', async () => {
    const s = { type: 'object', properties: { applicant: { type: 'object', properties: { age: { type: 'integer' } } } } };
    const draft = await create(editor, { schema: s, tests: [{ name: 'string age', data: { applicant: { age: 'x' } }, expect: false }] });
    const err = await env.fail(S.policyUpdate, { principal: publisher, policyId: draft.policyId, status: 'published' });
    expect(err.errors).toEqual([
      {
        code: 'test_failed',
        message: 'test `string age`: data does not match the schema: /applicant/age must be integer',
        path: 'tests.0',
      },
    ]);
  });
});

describe('ownership and listing', () => {
  it('a never-published base is listed for its creator only, loadable by id by a colleague; after publish both list it', async () => {
    const draft = await create(editor, { name: 'Ownership probe' });
    const mine = await list(editor, { q: 'ownership probe' });
    expect(mine.items.map((i) => i.baseId)).toEqual([draft.baseId]);
    expect(mine.items[0]).toMatchObject({ policyId: draft.policyId, draftId: draft.policyId, status: 'draft', latestVersion: null });
    expect((await list(colleague, { q: 'Ownership probe' })).items).toEqual([]);
    expect((await env.call(S.policyGet, { principal: colleague, policyId: draft.policyId }, PolicyRecord)).policyId).toBe(draft.policyId);
    await publish(draft.policyId);
    for (const who of [editor, colleague, as('viewer'), as('auditor')]) {
      const page = await list(who, { q: 'Ownership probe' });
      expect(page.items.map((i) => [i.baseId, i.status, i.version, i.latestVersion, i.draftId])).toEqual([
        [draft.baseId, 'published', 1, 1, null],
      ]);
    }
  });

  it('only the owner or an admin edits a never-published draft', async () => {
    const draft = await create(editor);
    const err = await env.fail(S.policyUpdate, { principal: colleague, policyId: draft.policyId, status: 'draft', description: 'x' });
    expect(err.code).toBe('forbidden');
    expect(
      (
        await env.call(
          S.policyUpdate,
          { principal: admin, policyId: draft.policyId, status: 'draft', description: 'by admin' },
          PolicyUpdateReply,
        )
      ).record.description,
    ).toBe('by admin');
    // once published, the base is org-level: any editor edits its draft
    const v1 = await publish(draft.policyId);
    const next = (await env.call(S.policyDraft, { principal: colleague, policyId: v1.record.policyId }, PolicyDraftReply)).record;
    expect(
      (await env.call(S.policyUpdate, { principal: editor, policyId: next.policyId, status: 'draft', description: 'y' }, PolicyUpdateReply))
        .record.description,
    ).toBe('y');
  });

  it('pages newest first with an opaque cursor and searches names case-insensitively, `%` literal', async () => {
    const user = as('editor', { userId: 'pager' });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(user, { name: `Pager 100% #${i}` })).baseId);
    await create(user, { name: 'Pager 100x' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: PolicySummaryPage = await list(user, { limit: 2, q: 'pager 100%', ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.baseId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
    expect((await env.fail(S.policyList, { principal: user, cursor: 'garbage' })).code).toBe('invalid_cursor');
    expect((await env.fail(S.policyList, { principal: user, limit: 201 })).code).toBe('bad_request');
  });

  it('refuses forged cursors that would reach SQL: a version past int4, U+0000 or a surrogate in a name', async () => {
    const forge = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
    const d = await create(editor, {});
    const versions = await env.fail(S.policyVersions, { principal: editor, policyId: d.policyId, limit: 5, cursor: forge({ v: 2 ** 40 }) });
    expect([versions.code, versions.status]).toEqual(['invalid_cursor', 400]);
    for (const k of ['a\u0000', '\ud800']) {
      const err = await env.fail(S.policyList, { principal: editor, sort: 'name', cursor: forge({ s: 'name', k, id: d.baseId }) });
      expect([err.code, err.status], JSON.stringify(k)).toEqual(['invalid_cursor', 400]);
    }
    const deleted = await env.fail(S.policyListDeleted, {
      principal: as('admin'),
      limit: 5,
      cursor: forge({ at: '+275760-09-13T00:00:00.000Z', id: d.baseId }),
    });
    expect(deleted.code).toBe('invalid_cursor');
  });
});

describe('list filters and orders', () => {
  const org = 'lists';
  const ed = as('editor', { orgId: org });
  const mate = as('editor', { orgId: org, userId: 'mate' });
  const pub = as('publisher', { orgId: org });
  const boss = as('admin', { orgId: org });
  const ids = (page: { items: { baseId: string }[] }) => page.items.map((i) => i.baseId);
  let a: string, b: string, c: string, d: string, groupId: string;

  beforeAll(async () => {
    // a (charlie, editor, published), b (alpha, mate, never published), c (bravo, editor, never published), d (delta, publisher, published)
    a = (await publish((await create(ed, { name: 'charlie' })).policyId, pub)).record.baseId;
    b = (await create(mate, { name: 'alpha' })).baseId;
    c = (await create(ed, { name: 'bravo' })).baseId;
    d = (await publish((await create(pub, { name: 'delta' })).policyId, pub)).record.baseId;
    groupId = (await env.call(S.groupCreate, { principal: ed, name: 'listed' }, Group)).groupId;
    await env.call(S.groupMemberAdd, { principal: ed, groupId, memberId: a, memberType: 'policy' }, GroupMember);
    await env.call(S.groupMemberAdd, { principal: ed, groupId, memberId: c, memberType: 'policy' }, GroupMember);
  });

  it('filters by status, creator and group, within what the caller sees', async () => {
    expect(ids(await list(ed))).toEqual([d, c, a]);
    expect(ids(await list(ed, { status: 'published' }))).toEqual([d, a]);
    expect(ids(await list(ed, { status: 'draft' }))).toEqual([c]);
    expect(ids(await list(ed, { createdBy: 'editor' }))).toEqual([c, a]);
    expect(ids(await list(ed, { createdBy: 'mate' }))).toEqual([]);
    expect(ids(await list(ed, { group: groupId }))).toEqual([c, a]);
    expect(ids(await list(mate, { group: groupId }))).toEqual([a]);
    expect(ids(await list(ed, { group: groupId, status: 'published', q: 'char' }))).toEqual([a]);
    // another org's view of the same group id is empty
    expect(ids(await list(as('admin', { orgId: 'other' }), { group: groupId, all: true }))).toEqual([]);
  });

  it('all=true shows an admin every never-published draft; 403 for anyone else', async () => {
    expect(ids(await list(boss))).toEqual([d, a]);
    expect(ids(await list(boss, { all: true }))).toEqual([d, c, b, a]);
    expect(ids(await list(boss, { all: 'true', status: 'draft' }))).toEqual([c, b]);
    expect(ids(await list(boss, { all: 'false' }))).toEqual([d, a]);
    for (const who of [ed, pub, as('viewer', { orgId: org })])
      expect((await env.fail(S.policyList, { principal: who, all: true })).code).toBe('forbidden');
  });

  it('sorts by name or updatedAt either way, with cursors that stay in that order', async () => {
    const walk = async (sort: string) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await list(boss, { all: true, sort, limit: 1, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return seen;
    };
    expect(ids(await list(boss, { all: true, sort: 'name' }))).toEqual([b, c, a, d]);
    expect(await walk('name')).toEqual([b, c, a, d]);
    expect(await walk('-name')).toEqual([d, a, c, b]);
    // editing c's draft (its current record) moves it last by updatedAt
    await env.call(
      S.policyUpdate,
      { principal: ed, policyId: (await list(ed, { q: 'bravo' })).items[0].policyId, status: 'draft', description: 'x' },
      PolicyUpdateReply,
    );
    const byUpdate = ids(await list(boss, { all: true, sort: 'updatedAt' }));
    expect(byUpdate.at(-1)).toBe(c);
    expect(await walk('updatedAt')).toEqual(byUpdate);
    expect(await walk('-updatedAt')).toEqual([...byUpdate].reverse());
  });

  it('refuses a cursor of another order, unknown parameters and bad values (400)', async () => {
    const page = await list(boss, { all: true, sort: 'name', limit: 1 });
    expect((await env.fail(S.policyList, { principal: boss, all: true, sort: '-name', cursor: page.nextCursor })).code).toBe(
      'invalid_cursor',
    );
    expect((await env.fail(S.policyList, { principal: boss, cursor: page.nextCursor })).code).toBe('invalid_cursor');
    for (const bad of [{ unknown: 1 }, { sort: 'id' }, { status: 'deleted' }, { group: 'not-a-uuid' }, { all: 'yes' }, { createdBy: '' }]) {
      expect((await env.fail(S.policyList, { principal: boss, ...bad })).code).toBe('bad_request');
    }
  });
});

describe('soft delete', () => {
  it('deleting any record id hides the whole base everywhere, by base and exact version id', async () => {
    const v1 = (await publish((await create(editor, { name: 'Doomed' })).policyId)).record;
    const draft = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    expect(await env.call(S.policyDelete, { principal: admin, policyId: draft.policyId }, DeleteBaseReply)).toEqual({ baseId: v1.baseId });
    for (const id of [v1.policyId, draft.policyId]) {
      for (const subject of [S.policyGet, S.policyVersions, S.policyDraft, S.policyDelete]) {
        expect((await env.fail(subject, { principal: admin, policyId: id })).code).toBe('not_found');
      }
      expect((await env.fail(S.policyUpdate, { principal: admin, policyId: id, status: 'draft' })).code).toBe('not_found');
      expect((await env.fail(S.policyResolve, { principal: as('viewer'), recordId: id })).code).toBe('not_found');
    }
    expect((await env.fail(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId })).code).toBe('not_found');
    expect((await list(editor, { q: 'Doomed' })).items).toEqual([]);
    // the rows are kept (soft delete); the index holds tombstones
    expect(await env.sql('registry_records').where({ base_id: v1.baseId }).count({ n: '*' }).first()).toEqual({ n: '2' });
    expect((await baseEntry(v1.baseId)).state).toBe('deleted');
    expect((await recordEntry(v1.policyId)).state).toBe('deleted');
  });
});

describe('concurrency', () => {
  it('two simultaneous publishes of one draft make exactly one version; the loser gets 409', async () => {
    const draft = await create();
    const results = await Promise.allSettled([publish(draft.policyId), publish(draft.policyId, admin)]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(['version_immutable', 'conflict']).toContain(lost[0].reason.code);
    const versions = await env.sql('registry_records').where({ base_id: draft.baseId }).select('version', 'status');
    expect(versions).toEqual([{ version: 1, status: 'published' }]);
  });

  it('two simultaneous draft requests on a version make one draft', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    const [a, b] = await Promise.all([
      env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply),
      env.call(S.policyDraft, { principal: colleague, policyId: v1.policyId }, PolicyDraftReply),
    ]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.record.policyId).toBe(b.record.policyId);
  });
});

describe('runnable index', () => {
  it('is current when the reply arrives: draft first, then each new version', async () => {
    const draft = await create();
    expect(await baseEntry(draft.baseId)).toMatchObject({
      state: 'live',
      recordId: draft.policyId,
      version: null,
      schemaHash: null,
      versions: {},
    });
    const entry = await recordEntry(draft.policyId);
    expect(entry).toMatchObject({
      state: 'live',
      kind: 'policy',
      orgId: 'acme',
      baseId: draft.baseId,
      rule: ADULT_RULE,
      status: 'draft',
      version: null,
    });
    const { createHash } = await import('node:crypto');
    expect(entry.state === 'live' && entry.ruleHash).toBe(createHash('sha256').update(ADULT_RULE).digest('hex'));

    const v1 = (await publish(draft.policyId)).record;
    expect(await baseEntry(draft.baseId)).toMatchObject({
      state: 'live',
      recordId: v1.policyId,
      version: 1,
      versions: { '1': v1.policyId },
    });
    const d2 = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    const rule2 = 'An **applicant** is adult if the __age__ of the **applicant** is at least 21.';
    await env.call(S.policyUpdate, { principal: editor, policyId: d2.policyId, status: 'draft', rule: rule2 }, PolicyUpdateReply);
    // a newer draft does not change what runs by base id, but is indexed by its own id
    expect(await baseEntry(draft.baseId)).toMatchObject({ recordId: v1.policyId, version: 1 });
    expect(await recordEntry(d2.policyId)).toMatchObject({ rule: rule2, status: 'draft' });
    const v2 = (await publish(d2.policyId)).record;
    expect(await baseEntry(draft.baseId)).toMatchObject({
      recordId: v2.policyId,
      version: 2,
      versions: { '1': v1.policyId, '2': v2.policyId },
    });
  });

  it('resolve rebuilds a cold index from PostgreSQL and keeps other orgs out', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    const draft = (await env.call(S.policyDraft, { principal: editor, policyId: v1.policyId }, PolicyDraftReply)).record;
    await env.redis.del(
      runnableBaseKey(env.prefix, 'policy', v1.baseId),
      runnableRecordKey(env.prefix, 'policy', v1.policyId),
      runnableRecordKey(env.prefix, 'policy', draft.policyId),
    );
    const byBase = await env.call(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId }, PolicyRecordEntry);
    expect(byBase).toMatchObject({ state: 'live', recordId: v1.policyId, version: 1, rule: ADULT_RULE });
    expect(await baseEntry(v1.baseId)).toMatchObject({ recordId: v1.policyId });
    expect(await env.call(S.policyResolve, { principal: as('viewer'), recordId: draft.policyId }, PolicyRecordEntry)).toMatchObject({
      recordId: draft.policyId,
      status: 'draft',
    });
    expect(await env.call(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId, version: 1 }, PolicyRecordEntry)).toMatchObject({
      recordId: v1.policyId,
    });
    expect((await env.fail(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId, version: 9 })).code).toBe('not_found');
    expect((await env.fail(S.policyResolve, { principal: as('viewer', { orgId: 'other' }), baseId: v1.baseId })).code).toBe('not_found');
    expect((await env.fail(S.policyResolve, { principal: as('viewer'), baseId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' })).code).toBe(
      'not_found',
    );
  });

  it('never replaces an entry with an older revision', async () => {
    const v1 = (await publish((await create()).policyId)).record;
    const key = runnableBaseKey(env.prefix, 'policy', v1.baseId);
    const current = RunnableBaseEntry.parse(JSON.parse((await env.redis.get(key))!));
    await env.redis.set(key, JSON.stringify({ ...current, rev: current.rev + 100, recordId: 'from-the-future' }));
    await env.call(S.policyResolve, { principal: as('viewer'), baseId: v1.baseId }, PolicyRecordEntry);
    expect((await baseEntry(v1.baseId)).state === 'live' && (await baseEntry(v1.baseId))).toMatchObject({ recordId: 'from-the-future' });
  });
});
