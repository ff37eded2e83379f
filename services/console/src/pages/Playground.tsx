import { useState } from 'react';
import { RuleWorkbench } from '../components/RuleWorkbench.js';

const SAMPLE_RULE =
  'A **driver** gets a licence if the __age__ of the **driver** is at least 17 and the **driver** passes the eyesight test.\n' +
  'A **driver** passes the eyesight test if the __vision score__ of the **driver** is greater than 0.5.\n';
const SAMPLE_DATA = '{\n  "driver": { "age": 18, "visionScore": 0.8 }\n}\n';

/** Ad hoc rules: write, validate, explain and run without saving anything. */
export function Playground() {
  const [rule, setRule] = useState(() => sessionStorage.getItem('arbiter.console.playground.rule') ?? SAMPLE_RULE);
  const [data, setData] = useState(SAMPLE_DATA);
  const onRule = (r: string) => {
    setRule(r);
    sessionStorage.setItem('arbiter.console.playground.rule', r);
  };
  return (
    <main>
      <h1>Editor</h1>
      <RuleWorkbench rule={rule} onRuleChange={onRule} data={data} onDataChange={setData} />
    </main>
  );
}
