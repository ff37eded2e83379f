import { useEffect, useRef } from 'react';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, placeholder as placeholderExt } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxHighlighting, defaultHighlightStyle, bracketMatching } from '@codemirror/language';

export interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** Language, lint, completion... (read once, when the editor is made). */
  extensions?: Extension[];
  label: string;
  testId?: string;
  placeholder?: string;
  /** Called with the view once it exists (to move the cursor from outside, e.g. from a trace line). */
  onView?: (view: EditorView | null) => void;
  minHeight?: string;
  /** Typing changes nothing (the text stays selectable and copyable); say why next to the editor. */
  readOnly?: boolean;
  /** Put the cursor in the editor when it is made. */
  autoFocus?: boolean;
}

/** The read-only state of an editor, switched without remaking it. */
const readOnlyState = (readOnly: boolean): Extension => [
  EditorState.readOnly.of(readOnly),
  EditorView.contentAttributes.of({ 'aria-readonly': String(readOnly) }),
];

/**
 * A CodeMirror 6 editor as a controlled React component. Tab indents; Escape then Tab leaves the
 * editor (CodeMirror's standard escape hatch), so the page stays keyboard-usable.
 */
export function CodeEditor({
  value,
  onChange,
  extensions = [],
  label,
  testId,
  placeholder,
  onView,
  minHeight = '8rem',
  readOnly = false,
  autoFocus = false,
}: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const readOnlyCompartment = useRef(new Compartment());
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const state = EditorState.create({
      doc: value,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': label, ...(testId ? { 'data-testid': testId } : {}) }),
        EditorView.theme({ '&': { minHeight }, '.cm-scroller': { minHeight } }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) changed.current(u.state.doc.toString());
        }),
        ...(placeholder ? [placeholderExt(placeholder)] : []),
        readOnlyCompartment.current.of(readOnlyState(readOnly)),
        ...extensions,
      ],
    });
    const v = new EditorView({ state, parent: host.current! });
    view.current = v;
    onView?.(v);
    if (autoFocus) v.focus();
    return () => {
      onView?.(null);
      v.destroy();
      view.current = null;
    };
    // The editor is made once; later `value`s are pushed in by the effect below.
  }, []);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({ effects: readOnlyCompartment.current.reconfigure(readOnlyState(readOnly)) });
  }, [readOnly]);

  return <div className={readOnly ? 'code-editor read-only' : 'code-editor'} ref={host} />;
}
