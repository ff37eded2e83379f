/** The cursors of the pages seen so far: the first page's is `undefined`, the last is the current page's. */
export type CursorTrail = (string | undefined)[];

/** Back and forward through a cursor-paged list (`{items, nextCursor}`), remembering the way back. */
export function CursorPager(props: {
  cursors: CursorTrail;
  nextCursor: string | null;
  onChange: (cursors: CursorTrail) => void;
  back: string;
  forward: string;
}) {
  const { cursors, nextCursor, onChange } = props;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={cursors.length <= 1} onClick={() => onChange(cursors.slice(0, -1))}>
        {props.back}
      </button>
      <span>Page {cursors.length}</span>
      <button type="button" disabled={!nextCursor} onClick={() => onChange([...cursors, nextCursor ?? undefined])}>
        {props.forward}
      </button>
    </nav>
  );
}
