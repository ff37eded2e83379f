import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { json } from '@codemirror/lang-json';
import { navigate } from '../lib/router.js';
import { ROLE_CAPABILITIES } from '@arbiter/contracts/access';
import { can, useSession } from '../lib/session.js';
import type { FlowRecord, MeResponse, PolicyRecord, TestRunReport, UncoveredItem } from '@arbiter/contracts';
import type { RecordsApi } from '@arbiter/sdk/client';
import type { ShownImpact } from '../lib/impact.js';
import { ImpactPanel, type ImpactEndpoints } from '../components/ImpactPanel.js';
import { ShadowPanel, type ShadowEndpoints } from '../components/ShadowPanel.js';
import { DecisionsPanel, type DecisionsEndpoints } from '../components/DecisionsPanel.js';
import { CodeEditor } from '../editor/CodeEditor.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { Link } from '../components/Link.js';
import { TestsPanel, type SavedTest, type SavedTestsRun } from '../components/TestsPanel.js';
import { VersionDiff } from '../components/VersionDiff.js';
import { parseData } from '../components/RuleWorkbench.js';
import { ScheduleField } from '../components/ScheduleField.js';
import { effectiveFromOf, publishedNotice, rollbackNotice } from '../lib/schedule.js';

export type AnyRecord = PolicyRecord | FlowRecord;

/** What differs between the policy and the flow page. */
export interface RecordKind<R extends AnyRecord> {
  noun: 'policy' | 'flow';
  plural: 'policies' | 'flows';
  /** The kind's endpoints (`api.policies` or `api.flows`). */
  endpoints: RecordEndpoints<R>;
  idOf: (r: R) => string;
  /** The editable content as text (the rule, or the definition as JSON). */
  contentOf: (r: R) => string;
  /** The body fields for the content text; throws with a message when it is not valid. */
  contentBody: (text: string) => Record<string, unknown>;
  /** Runs a saved test against the content being edited; answers the result to compare with `expect`. */
  runTest: (content: string, data: unknown) => Promise<unknown>;
  /** Whether the API analyses this kind's drafts (`POST /{noun}/{id}/impact`): the review view then shows the impact panel. */
  impactAnalysis: boolean;
}

/** What the page asks of `api.policies` / `api.flows`: the record, its versions, edits, reviews and impact analyses. */
export type RecordEndpoints<R extends AnyRecord> = RecordsApi<R, unknown, unknown, Record<string, unknown>, ReviewView, unknown, unknown>;

/** What the review section shows of `GET /{noun}/{id}/review`. */
export interface ReviewView {
  state: string;
  impact?: ShownImpact | null;
  requestedBy: string | null;
  requestedAt: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
  comment: string | null;
  checks?: { passed: boolean; checkedAt: string; coverage?: { percent: number } | null; warnings?: { message: string }[] | null } | null;
}

/** What `GET …/versions` says of a version's place on its base's timeline. */
interface TimelineFields {
  effectiveFrom?: string | null;
  effectiveUntil?: string | null;
  cancelled?: boolean;
  rollbackOf?: number | null;
}

/** A version's effective interval as text: from … until …, scheduled, or cancelled. */
function effectText(t: TimelineFields): string {
  if (t.effectiveFrom == null) return '—';
  if (t.cancelled) return `cancelled (was scheduled for ${new Date(t.effectiveFrom).toLocaleString()})`;
  const from = new Date(t.effectiveFrom).toLocaleString();
  if (Date.parse(t.effectiveFrom) > Date.now()) return `scheduled for ${from}`;
  return t.effectiveUntil ? `${from} – ${new Date(t.effectiveUntil).toLocaleString()}` : `since ${from}`;
}

const when = (iso: string) => <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;

/** Who asked for the review and when, the checks at submission, and the decision so far. */
function ReviewFacts({ review }: { review: ReviewView }) {
  return (
    <p data-testid="review-facts">
      {review.requestedBy && review.requestedAt ? (
        <>
          Asked for review by <strong data-testid="review-requested-by">{review.requestedBy}</strong> on {when(review.requestedAt)}.
        </>
      ) : (
        'Not submitted for review.'
      )}
      {review.checks ? ` Publish checks ${review.checks.passed ? 'passed' : 'failed'} at submission.` : ''}
      {review.checks?.coverage ? ` Its saved tests covered ${review.checks.coverage.percent} %.` : ''}
      {review.checks?.warnings?.length ? ` Static checks warned: ${review.checks.warnings.map((w) => w.message).join(' ')}` : ''}
      {review.decidedBy && review.decidedAt && (review.state === 'approved' || review.state === 'rejected') && (
        <>
          {' '}
          {review.state === 'approved' ? 'Approved' : 'Rejected'} by <strong>{review.decidedBy}</strong> on {when(review.decidedAt)}
          {review.comment ? `: “${review.comment}”` : ''}.
        </>
      )}
    </p>
  );
}

export interface EditorSlotProps {
  content: string;
  setContent: (c: string) => void;
  data: string;
  setData: (d: string) => void;
  baseId: string;
  editable: boolean;
  /** Why the content cannot be edited (shown beside the editor); null when it can. */
  readOnlyReason: string | null;
  /** What the last run of the saved tests left uncovered, while the content on screen is the one that ran; else null. */
  uncovered: readonly UncoveredItem[] | null;
}

/** Why the signed-in caller cannot edit what the page shows, or null when they can. */
export function readOnlyReasonOf(
  me: MeResponse,
  noun: 'policy' | 'flow',
  draft: { status: string } | null,
  latest: { version: number | null } | null,
): string | null {
  if (!can(me, 'edit')) {
    return me.scopes !== undefined && ROLE_CAPABILITIES[me.role].includes('edit')
      ? `Read-only: the API key you signed in with has no \`edit\` scope.`
      : `Read-only: your role (${me.role}) cannot edit a ${noun}.`;
  }
  if (draft === null && latest !== null) {
    return `Read-only: this is published version ${latest.version}, which never changes. “Edit: new draft from v${latest.version}” makes a draft to change.`;
  }
  return null;
}

const jsonExt = [json()];

/** A policy or flow: edit the draft, saved tests, publish or review, versions and diff, delete. */
export function RecordPage<R extends AnyRecord>({
  id,
  kind,
  renderEditor,
  initialData,
}: {
  id: string;
  kind: RecordKind<R>;
  renderEditor: (p: EditorSlotProps) => ReactNode;
  initialData: string;
}) {
  const { me, api } = useSession();
  const [records, setRecords] = useState<R[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [content, setContent] = useState('');
  const [schema, setSchema] = useState('null');
  const [tests, setTests] = useState<SavedTest[]>([]);
  const [data, setData] = useState(initialData);
  const [comment, setComment] = useState('');
  // The "Takes effect at" field (a `datetime-local` value): empty publishes and rolls back at once.
  const [effectiveAt, setEffectiveAt] = useState('');
  const [busy, setBusy] = useState(false);
  const [loadCount, setLoadCount] = useState(0);
  const [reviewView, setReviewView] = useState<ReviewView | null>(null);
  // The last run of the saved tests, with the content and tests it ran (the saved ones at the time).
  const [testRun, setTestRun] = useState<{ report: TestRunReport; content: string; tests: string } | null>(null);

  const load = useCallback(async () => {
    const rec = await kind.endpoints.get(id);
    const page = await kind.endpoints.versions(kind.idOf(rec), { pageSize: 50 }).page();
    setRecords(page.items);
    const editing = page.items.find((r) => r.status === 'draft') ?? page.items[0] ?? rec;
    const asked = editing.status === 'draft' && editing.review && editing.review.state !== 'draft';
    // the record loads even when the summary cannot (the buttons still work; the API decides)
    setReviewView(asked ? await kind.endpoints.review(kind.idOf(editing)).catch(() => null) : null);
    setName(editing.name);
    setDescription(editing.description);
    setContent(kind.contentOf(editing));
    setSchema(JSON.stringify(editing.schema, null, 2));
    setTests(editing.tests);
    const first = editing.tests[0];
    if (first) setData(JSON.stringify(first.data, null, 2));
    setLoadCount((n) => n + 1);
  }, [id, kind]);

  useEffect(() => {
    load().catch(setError);
  }, [load]);

  const draft = records?.find((r) => r.status === 'draft') ?? null;
  const latest = records?.find((r) => r.status === 'published') ?? null;
  const baseId = (draft ?? latest)?.baseId ?? id;
  const draftId = draft ? kind.idOf(draft) : null;
  const impactEndpoints = useMemo<ImpactEndpoints | null>(
    () =>
      draftId !== null && kind.impactAnalysis
        ? { review: () => kind.endpoints.review(draftId), analyse: (opts) => kind.endpoints.impact(draftId, opts) }
        : null,
    [draftId, kind],
  );

  const shadowEndpoints = useMemo<ShadowEndpoints>(
    () => ({
      get: () => kind.endpoints.shadow(baseId),
      start: (body) => kind.endpoints.startShadow(baseId, body),
      stop: () => kind.endpoints.stopShadow(baseId),
    }),
    [baseId, kind],
  );

  const decisionsEndpoints = useMemo<DecisionsEndpoints>(
    () => ({
      page: (cursor) => api.decisions.list({ baseId, pageSize: 20 }).page(cursor),
      saveAsTest: (decisionId, testName) => kind.endpoints.testFromDecision(baseId, { decisionId, name: testName }),
    }),
    [api, baseId, kind],
  );

  const act = async (what: () => Promise<string | null>) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      const message = await what();
      await load();
      setNotice(message);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const body = (status: 'draft' | 'published', effectiveFrom?: string) => {
    const parsedSchema = parseData(schema);
    if (!parsedSchema.ok) throw new Error(`Schema: ${parsedSchema.error}`);
    const at = effectiveFrom !== undefined ? { effectiveFrom } : {};
    return { status, ...at, name, description, ...kind.contentBody(content), schema: parsedSchema.value, tests };
  };
  // A scheduled action empties the field once it succeeded, so the next one is not scheduled by surprise.
  const scheduled = (effectiveFrom: string | undefined, message: string) => {
    if (effectiveFrom !== undefined) setEffectiveAt('');
    return message;
  };

  const save = () =>
    act(async () => {
      await kind.endpoints.update(kind.idOf(draft!), body('draft'));
      return 'Draft saved.';
    });
  const publish = () =>
    act(async () => {
      const effectiveFrom = effectiveFromOf(effectiveAt);
      const res = await kind.endpoints.update(kind.idOf(draft!), body('published', effectiveFrom));
      return res.outcome === 'submitted'
        ? 'Submitted for review: a publisher or admin other than you approves it.'
        : scheduled(effectiveFrom, publishedNotice(res.record.version, effectiveFrom));
    });
  const newDraft = () =>
    act(async () => {
      await kind.endpoints.draft(kind.idOf(latest!));
      return 'A new draft was made from the latest version.';
    });
  const review = (step: 'approve' | 'reject' | 'publish') =>
    act(async () => {
      const recordId = kind.idOf(draft!);
      if (step === 'publish') {
        const effectiveFrom = effectiveFromOf(effectiveAt);
        const published = await kind.endpoints.publishReviewed(recordId, effectiveFrom !== undefined ? { effectiveFrom } : {});
        return scheduled(effectiveFrom, publishedNotice(published.version, effectiveFrom));
      }
      const decision = comment ? { comment } : {};
      const res = step === 'approve' ? await kind.endpoints.approve(recordId, decision) : await kind.endpoints.reject(recordId, decision);
      return `Review ${res.state}.`;
    });
  // The timeline (docs/api.md#scheduled-versions-as-of-runs-and-rollback): cancel a schedule, roll back to a version's content.
  const cancelSchedule = (version: number) =>
    act(async () => {
      await kind.endpoints.cancelSchedule(baseId, version);
      return `The schedule of version ${version} was cancelled.`;
    });
  const rollback = (version: number) =>
    act(async () => {
      const effectiveFrom = effectiveFromOf(effectiveAt);
      const made = await kind.endpoints.rollback(baseId, version, effectiveFrom !== undefined ? { effectiveFrom } : {});
      return scheduled(effectiveFrom, rollbackNotice(made.version, version, effectiveFrom));
    });
  const remove = async () => {
    if (!window.confirm(`Delete “${name}” with all its versions? An admin can restore it later.`)) return;
    setError(null);
    try {
      await kind.endpoints.delete(kind.idOf((draft ?? latest)!));
      navigate(`/${kind.plural}`);
    } catch (err) {
      setError(err);
    }
  };

  const shown = draft ?? latest;
  const savedRun = useMemo<SavedTestsRun | null>(() => {
    if (!shown) return null;
    const what = kind.noun === 'policy' ? 'rule' : 'definition';
    return {
      target: shown.status === 'draft' ? 'the draft' : `version ${shown.version}`,
      run: async () => {
        const report = await kind.endpoints.runTests(
          baseId,
          shown.status === 'draft' || shown.version === null ? {} : { version: shown.version },
        );
        setTestRun({ report, content: kind.contentOf(shown), tests: JSON.stringify(shown.tests) });
      },
      report: testRun?.report ?? null,
      stale:
        testRun === null
          ? null
          : testRun.content !== content
            ? `Out of date: the ${what} on screen is not the saved one that ran`
            : testRun.tests !== JSON.stringify(tests)
              ? 'Out of date: the tests on screen are not the saved ones that ran'
              : null,
    };
  }, [shown, kind, baseId, testRun, content, tests]);
  const uncovered = useMemo(() => (testRun && testRun.content === content ? testRun.report.coverage.uncovered : null), [testRun, content]);

  const diffable = useMemo(
    () =>
      (records ?? []).map((r) => ({
        label: r.status === 'draft' ? 'draft' : `version ${r.version}`,
        text: `${kind.contentOf(r)}\n\n# schema\n${JSON.stringify(r.schema, null, 2)}\n\n# tests\n${JSON.stringify(r.tests, null, 2)}\n`,
      })),
    [records, kind],
  );

  if (!records) {
    return (
      <main>
        <p>
          <Link to={`/${kind.plural}`}>← {kind.plural}</Link>
        </p>
        <ErrorBox error={error} />
        {!error && <p className="loading">Loading…</p>}
      </main>
    );
  }

  const editable = draft !== null && can(me, 'edit');
  const readOnlyReason = editable ? null : readOnlyReasonOf(me, kind.noun, draft, latest);
  const reviewState = draft?.review?.state;
  // What the "Takes effect at" field applies to: a publish of the draft (direct or approved) or a rollback.
  const rollbackable = records.some((r) => r.status === 'published' && r !== latest);
  const scheduledAt = effectiveFromOf(effectiveAt);
  const schedulable = can(me, 'publish') && ((draft !== null && (editable || reviewState === 'approved')) || rollbackable);
  return (
    <main>
      <p>
        <Link to={`/${kind.plural}`}>← {kind.plural === 'policies' ? 'Policies' : 'Flows'}</Link>
      </p>
      <h1 data-testid="record-title">
        {name} <span className="badge">{latest ? `v${latest.version} published` : 'never published'}</span>
        {draft && (
          <span className="badge draft">draft{reviewState && reviewState !== 'draft' ? `: ${reviewState.replace('_', ' ')}` : ''}</span>
        )}
        {draft?.review?.stale && <span className="badge fail">changed since the request</span>}
      </h1>
      <p className="muted">
        Base id <code data-testid="base-id">{baseId}</code>
      </p>
      <ErrorBox error={error} />
      {notice && (
        <p className="notice" role="status" data-testid="notice">
          {notice}
        </p>
      )}
      <div className="actions">
        {editable && (
          <>
            <button type="button" onClick={() => void save()} disabled={busy} data-testid="save">
              Save draft
            </button>
            <button type="button" onClick={() => void publish()} disabled={busy} data-testid="publish">
              Publish (or submit for review)
            </button>
          </>
        )}
        {!draft && latest && can(me, 'edit') && (
          <button type="button" onClick={() => void newDraft()} disabled={busy} data-testid="new-draft">
            Edit: new draft from v{latest.version}
          </button>
        )}
        {can(me, 'admin') && (
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete
          </button>
        )}
      </div>
      {schedulable && <ScheduleField value={effectiveAt} onChange={setEffectiveAt} disabled={busy} />}
      {draft && reviewView && (
        <section className="review-box" aria-label="Review" data-testid="review">
          <h2>Review: {reviewView.state.replace('_', ' ')}</h2>
          <ReviewFacts review={reviewView} />
          {can(me, 'publish') && (reviewState === 'pending_approval' || reviewState === 'approved') && (
            <div className="actions review-actions">
              {reviewState === 'pending_approval' && (
                <>
                  <label className="review-comment">
                    Comment <input value={comment} onChange={(e) => setComment(e.target.value)} placeholder="optional" />
                  </label>
                  <button type="button" className="approve" onClick={() => void review('approve')} disabled={busy}>
                    Approve
                  </button>
                  <button type="button" onClick={() => void review('reject')} disabled={busy}>
                    Reject
                  </button>
                </>
              )}
              {reviewState === 'approved' && (
                <button type="button" className="approve" onClick={() => void review('publish')} disabled={busy}>
                  Publish approved draft
                </button>
              )}
            </div>
          )}
        </section>
      )}
      <div className="meta-fields">
        <label className="field">
          Name <input value={name} onChange={(e) => setName(e.target.value)} readOnly={!editable} />
        </label>
        <label className="field">
          Description <input value={description} onChange={(e) => setDescription(e.target.value)} readOnly={!editable} />
        </label>
      </div>
      <div key={loadCount}>{renderEditor({ content, setContent, data, setData, baseId, editable, readOnlyReason, uncovered })}</div>
      <details>
        <summary>JSON Schema of the data</summary>
        <CodeEditor
          key={`schema-${loadCount}`}
          value={schema}
          onChange={setSchema}
          extensions={jsonExt}
          label="JSON Schema"
          readOnly={!editable}
        />
      </details>
      <TestsPanel
        key={`tests-${loadCount}`}
        tests={tests}
        onChange={setTests}
        editable={editable}
        runOne={(t) => kind.runTest(content, t.data)}
        saved={savedRun ?? undefined}
        newTestData={() => {
          const parsed = parseData(data);
          return parsed.ok ? parsed.value : {};
        }}
      />
      {draftId !== null && impactEndpoints !== null && (
        <ImpactPanel draftId={draftId} noun={kind.noun} endpoints={impactEndpoints} reloadKey={loadCount} />
      )}
      {records !== null && <ShadowPanel draftId={draftId} canEdit={can(me, 'edit')} endpoints={shadowEndpoints} reloadKey={loadCount} />}
      {can(me, 'audit') && (
        <DecisionsPanel
          key={`decisions-${baseId}`}
          endpoints={decisionsEndpoints}
          // The draft now has the test: loaded again, so the tests panel shows it.
          onSaved={(message) => void act(() => Promise.resolve(message))}
        />
      )}
      <section aria-label="Versions" className="versions">
        <h2>Versions</h2>
        {schedulable && rollbackable && scheduledAt !== undefined && (
          <p className="hint" data-testid="rollback-schedule">
            A rollback from here is scheduled for {new Date(scheduledAt).toLocaleString()} (“Takes effect at” above).
          </p>
        )}
        <table className="list" data-testid="versions">
          <thead>
            <tr>
              <th>Record</th>
              <th>Published</th>
              <th>Updated by</th>
              <th>In effect</th>
              {can(me, 'publish') && <th>Timeline</th>}
            </tr>
          </thead>
          <tbody>
            {records.map((r) => {
              const t = r as TimelineFields;
              const pending = t.effectiveFrom != null && !t.cancelled && Date.parse(t.effectiveFrom) > Date.now();
              return (
                <tr key={kind.idOf(r)}>
                  <td>
                    {r.status === 'draft' ? 'draft' : `version ${r.version}`}
                    {t.rollbackOf != null ? ` (rollback of ${t.rollbackOf})` : ''}
                  </td>
                  <td>{r.publishedAt ? `${new Date(r.publishedAt).toLocaleString()} by ${r.publishedBy}` : '—'}</td>
                  <td>{(r as { updatedBy?: string }).updatedBy ?? r.createdBy}</td>
                  <td data-testid="in-effect">{effectText(t)}</td>
                  {can(me, 'publish') && (
                    <td>
                      {pending && r.version !== null && (
                        <button type="button" disabled={busy} onClick={() => void cancelSchedule(r.version!)}>
                          Cancel schedule
                        </button>
                      )}
                      {r.status === 'published' && r.version !== null && r !== latest && (
                        <button type="button" disabled={busy} onClick={() => void rollback(r.version!)}>
                          Roll back to this
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
        <h3>Compare</h3>
        <VersionDiff records={diffable} />
      </section>
    </main>
  );
}
