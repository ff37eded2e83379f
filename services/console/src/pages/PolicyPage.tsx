import { useMemo, useState } from 'react';
import { uncoveredConditions } from '../lib/coverage.js';
import { useSession } from '../lib/session.js';
import type { ArbiterClient } from '@arbiter/sdk/client';
import type { PolicyRecord, StoredPolicyRunResponse } from '@arbiter/contracts';
import { RuleWorkbench, parseData } from '../components/RuleWorkbench.js';
import { RunResultView } from '../components/RunResultView.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { RecordPage, type EditorSlotProps, type RecordKind } from './RecordPage.js';

function policyKind(api: ArbiterClient): RecordKind<PolicyRecord> {
  return {
    noun: 'policy',
    plural: 'policies',
    endpoints: api.policies,
    idOf: (r) => r.policyId,
    contentOf: (r) => r.rule,
    contentBody: (rule) => ({ rule }),
    runTest: async (rule, data) => {
      const r = await api.rules.evaluate({ rule, data: data as Record<string, unknown> });
      if (r.error) throw new Error(r.error);
      return r.result;
    },
    impactAnalysis: true,
  };
}

/** The stored policy's editor: the draft's rule in the workbench, and a run of the stored policy by base id. */
function PolicyEditor({ content, setContent, data, setData, baseId, readOnlyReason, uncovered }: EditorSlotProps) {
  const { api } = useSession();
  const [stored, setStored] = useState<StoredPolicyRunResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const underlined = useMemo(() => (uncovered ? uncoveredConditions(uncovered) : null), [uncovered]);
  const runStored = async () => {
    setError(null);
    const parsed = parseData(data);
    if (!parsed.ok) return setError(new Error(parsed.error));
    try {
      setStored(await api.policies.run(baseId, parsed.value as Record<string, unknown>, { reasons: true }));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <RuleWorkbench
        rule={content}
        onRuleChange={setContent}
        data={data}
        onDataChange={setData}
        readOnlyReason={readOnlyReason}
        uncovered={underlined}
      />
      <section aria-label="Stored run" className="stored-run">
        <h2>Run the stored policy</h2>
        <p className="muted">Runs what callers get at POST /run/policy/{baseId}: the latest version (the draft if never published).</p>
        <button type="button" onClick={() => void runStored()} data-testid="run-stored">
          Run by base id
        </button>
        <ErrorBox error={error} />
        {stored && (
          <div data-testid="stored-result">
            <RunResultView result={stored} />
          </div>
        )}
      </section>
    </>
  );
}

export function PolicyPage({ id }: { id: string }) {
  const { api } = useSession();
  const kind = useMemo(() => policyKind(api), [api]);
  return <RecordPage id={id} kind={kind} renderEditor={(p) => <PolicyEditor {...p} />} initialData={'{\n  \n}\n'} />;
}
