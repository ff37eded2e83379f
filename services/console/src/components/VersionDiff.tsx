import { useState } from 'react';
import { diffLines } from 'diff';

export interface DiffableRecord {
  label: string;
  text: string;
}

/** Line diff between two records (drafts or versions) chosen from `records`. */
export function VersionDiff({ records }: { records: DiffableRecord[] }) {
  const [left, setLeft] = useState(Math.min(1, records.length - 1));
  const [right, setRight] = useState(0);
  if (records.length < 2) return <p className="muted">Only one record: nothing to compare yet.</p>;
  const parts = diffLines(records[left]?.text ?? '', records[right]?.text ?? '');
  return (
    <div className="diff" data-testid="diff">
      <div className="toolbar">
        <label>
          From{' '}
          <select value={left} onChange={(e) => setLeft(Number(e.target.value))}>
            {records.map((r, i) => (
              <option key={i} value={i}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          To{' '}
          <select value={right} onChange={(e) => setRight(Number(e.target.value))}>
            {records.map((r, i) => (
              <option key={i} value={i}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <pre>
        {parts.map((p, i) => (
          <span key={i} className={p.added ? 'added' : p.removed ? 'removed' : undefined}>
            {p.value
              .replace(/\n$/, '')
              .split('\n')
              .map((line) => `${p.added ? '+ ' : p.removed ? '- ' : '  '}${line}`)
              .join('\n') + '\n'}
          </span>
        ))}
      </pre>
    </div>
  );
}
