import { problemText } from '../lib/api.js';

/** An API failure shown as what it says (the problem's `detail`). */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <div className="error" role="alert">
      {problemText(error)}
    </div>
  );
}
