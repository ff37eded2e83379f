/**
 * What a comparison of two versions' decisions counts, as the impact analysis (ImpactPanel) and
 * the shadow runs (ShadowPanel) both show it: the counts, then the transitions of the result.
 */

/** The counts of a report in the order of `counts` (field and label); a non-zero `changed` is marked. */
export function ChangeCounts<F extends string>({
  counts,
  values,
  testIdPrefix,
}: {
  counts: ReadonlyArray<readonly [F, string]>;
  values: Readonly<Record<F, number>>;
  /** Each count's test id is `<prefix>-<field>`. */
  testIdPrefix: string;
}) {
  return (
    <dl className="impact-counts">
      {counts.map(([field, label]) => (
        <div key={field} className={field === 'changed' && values[field] > 0 ? 'changed' : undefined}>
          <dt>{label}</dt>
          <dd data-testid={`${testIdPrefix}-${field}`}>{values[field]}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The transitions as rows `[from, to, decisions]` (most frequent first); nothing when there are none. */
export function TransitionsTable({
  rows,
  caption,
  head,
  testId,
}: {
  rows: ReadonlyArray<readonly [string, string, number]>;
  caption: string;
  /** Column headings, when the caption does not say what the columns are. */
  head?: readonly [string, string, string];
  testId: string;
}) {
  if (rows.length === 0) return null;
  return (
    <table className="list impact-transitions" data-testid={testId}>
      <caption>{caption}</caption>
      {head && (
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
      )}
      <tbody>
        {rows.map(([from, to, n]) => (
          <tr key={`${from}→${to}`}>
            <td>{from}</td>
            <td>{to}</td>
            <td>{n}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
