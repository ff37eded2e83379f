import { useState } from 'react';
import { RuleWorkbench } from '../components/RuleWorkbench.js';

const SAMPLE_RULE =
  'A **driver** gets a licence if the __age__ of the **driver** is at least 17 and the **driver** passes the eyesight test.\n' +
  'A **driver** passes the eyesight test if the __vision score__ of the **driver** is greater than 0.5.\n';
const SAMPLE_DATA = '{\n  "driver": { "age": 18, "visionScore": 0.8 }\n}\n';
const EMPTY_DATA = '{\n  \n}\n';
const RULE_KEY = 'arbiter.console.playground.rule';

/** Ad hoc rules: write, validate, explain and run without saving anything. */
export function Playground() {
  const [rule, setRule] = useState(() => sessionStorage.getItem(RULE_KEY) ?? SAMPLE_RULE);
  const [data, setData] = useState(SAMPLE_DATA);
  // A new workbench (results gone, cursor in the empty editor) each time New, Clear or Sample is pressed.
  const [generation, setGeneration] = useState(0);
  const onRule = (r: string) => {
    setRule(r);
    sessionStorage.setItem(RULE_KEY, r);
  };
  const restart = (nextRule: string, nextData: string) => {
    onRule(nextRule);
    setData(nextData);
    setGeneration((g) => g + 1);
  };
  return (
    <main>
      <h1>Editor</h1>
      <div className="actions" aria-label="Editor actions">
        <button type="button" onClick={() => restart('', EMPTY_DATA)} data-testid="new-rule" title="An empty rule and empty data">
          New
        </button>
        <button type="button" onClick={() => restart('', data)} data-testid="clear-rule" title="Empty the rule; keep the data">
          Clear
        </button>
        <button type="button" onClick={() => restart(SAMPLE_RULE, SAMPLE_DATA)} data-testid="sample-rule">
          Sample
        </button>
        {rule === SAMPLE_RULE && (
          <span className="muted" data-testid="sample-hint">
            This is a sample rule: New or Clear starts an empty one.
          </span>
        )}
      </div>
      <RuleWorkbench key={generation} rule={rule} onRuleChange={onRule} data={data} onDataChange={setData} autoFocus={generation > 0} />
    </main>
  );
}
