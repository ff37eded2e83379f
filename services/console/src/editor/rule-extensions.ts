import { RangeSetBuilder, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view';
import { forceLinting, linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import type { ArbiterClient } from '@arbiter/sdk/client';
import { LONGEST_PHRASE_WORDS, OPERATOR_START_WORDS, OPERATOR_SYMBOLS } from '@arbiter/rule-lang/operator-words';
import { problemText } from '../lib/api.js';
import { errorLocation, errorRange, ruleLanguage } from '../lib/rule-syntax.js';
import { uncoveredConditionText } from '../lib/coverage.js';
import type { ReasonMark } from '../lib/reasons.js';
import type { OperatorsResponse, UncoveredCondition, ValidateHttpResponse, ValidateResponse } from '@arbiter/contracts';

/** Pause after the last keystroke before the rule is sent to `/validate`. */
export const VALIDATE_DEBOUNCE_MS = 400;

/**
 * Diagnostics of the rule from the server's parser, underlined at the line and column it reports;
 * for a valid rule, its static-check warnings (`checks`), each underlining the condition it names.
 */
export function validateDiagnostics(text: string, reply: ValidateResponse & Partial<Pick<ValidateHttpResponse, 'checks'>>): Diagnostic[] {
  if (reply.valid) {
    return (reply.checks ?? []).map((c) => {
      const { from } = errorRange(text, { line: c.line, column: c.column });
      return {
        from,
        to: Math.min(from + Math.max(c.text.length, 1), text.length),
        severity: 'warning',
        message: c.message,
        source: c.check,
      };
    });
  }
  if (!reply.error) return [];
  const location = errorLocation(reply.error);
  const { from, to } = location ? errorRange(text, location) : { from: 0, to: Math.min(text.length, 1) };
  return [{ from, to, severity: 'error', message: reply.error, source: 'validate' }];
}

/**
 * The parts of the rule its saved tests left uncovered, underlined at the line and column the
 * coverage report gives, over their text (as static-check warnings are, in a style of their own:
 * class `cm-uncovered`), each saying which way the tests never saw it.
 */
export function coverageDiagnostics(text: string, uncovered: readonly UncoveredCondition[]): Diagnostic[] {
  return uncovered.map((u) => {
    const { from } = errorRange(text, { line: u.line, column: u.column });
    return {
      from,
      to: Math.min(from + Math.max(u.text.length, 1), text.length),
      severity: 'info',
      markClass: 'cm-uncovered',
      message: uncoveredConditionText(u),
      source: 'coverage',
    };
  });
}

/** Puts a coverage report's uncovered parts on the rule editor (an empty list clears them). */
export const setUncovered = StateEffect.define<readonly UncoveredCondition[]>();

/** The uncovered parts shown: set by `setUncovered`, dropped as soon as the text changes (their places are the text's that ran). */
const uncoveredField = StateField.define<readonly UncoveredCondition[]>({
  create: () => [],
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setUncovered)) value = e.value;
    return tr.docChanged ? [] : value;
  },
});

/** The coverage underlines: a second lint source beside `/validate`, read from `uncoveredField`. */
export function coverageMarks(): Extension {
  return [
    uncoveredField,
    linter((view) => coverageDiagnostics(view.state.doc.toString(), view.state.field(uncoveredField)), {
      delay: VALIDATE_DEBOUNCE_MS,
      needsRefresh: (u) => u.transactions.some((tr) => tr.effects.some((e) => e.is(setUncovered))),
    }),
  ];
}

/** Shows the uncovered parts in an editor made with `ruleExtensions`, at once. */
export function showUncovered(view: EditorView, uncovered: readonly UncoveredCondition[]): void {
  view.dispatch({ effects: setUncovered.of(uncovered) });
  forceLinting(view);
}

/** Puts a run's deciding conditions on the rule editor (an empty list clears them). */
export const setReasonMarks = StateEffect.define<readonly ReasonMark[]>();

const holdsMark = Decoration.mark({ class: 'cm-reason cm-reason-true', attributes: { title: 'Decided the result: held' } });
const failsMark = Decoration.mark({ class: 'cm-reason cm-reason-false', attributes: { title: 'Decided the result: did not hold' } });

/** The marks of `marks` in `text`, in document order, each over its text from its line and column. */
export function reasonDecorations(text: string, marks: readonly ReasonMark[]): DecorationSet {
  const ranges = marks
    .map((m) => {
      const { from } = errorRange(text, { line: m.line, column: m.column });
      return { from, to: Math.min(from + Math.max(m.text.length, 1), text.length), holds: m.holds };
    })
    .filter((r) => r.to > r.from)
    .sort((a, b) => a.from - b.from || a.to - b.to);
  const builder = new RangeSetBuilder<Decoration>();
  for (const r of ranges) builder.add(r.from, r.to, r.holds ? holdsMark : failsMark);
  return builder.finish();
}

/**
 * The deciding conditions of the last run (green: held, red: did not), set by `setReasonMarks`
 * and dropped as soon as the text changes (their places are the text's that ran).
 */
const reasonField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setReasonMarks)) value = reasonDecorations(tr.state.doc.toString(), e.value);
    return tr.docChanged ? Decoration.none : value;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** Shows a run's deciding conditions in an editor made with `ruleExtensions`. */
export function showReasonMarks(view: EditorView, marks: readonly ReasonMark[]): void {
  view.dispatch({ effects: setReasonMarks.of(marks) });
}

/** Live diagnostics: `POST /validate`, debounced by CodeMirror's linter. */
export function ruleLinter(api: ArbiterClient, onResult?: (reply: ValidateResponse | null) => void): Extension {
  return [
    lintGutter(),
    linter(
      async (view: EditorView): Promise<Diagnostic[]> => {
        const text = view.state.doc.toString();
        if (!text.trim()) {
          onResult?.(null);
          return [];
        }
        try {
          const reply = await api.rules.validate(text);
          onResult?.(reply);
          return validateDiagnostics(text, reply);
        } catch (err) {
          onResult?.({ valid: false, error: problemText(err) });
          return [{ from: 0, to: Math.min(1, text.length), severity: 'warning', message: `could not validate: ${problemText(err)}` }];
        }
      },
      { delay: VALIDATE_DEBOUNCE_MS },
    ),
  ];
}

/** The start of an operator phrase being typed: a word an operator starts with and the phrase's further words, or a run of symbol characters. */
const OPERATOR_PREFIX = ((): RegExp => {
  const escape = (s: string): string => s.replace(/[\\\]^-]/g, '\\$&');
  const symbolChars = [...new Set(OPERATOR_SYMBOLS.join(''))].map(escape).join('');
  return new RegExp(`(?:^|\\s)((?:${OPERATOR_START_WORDS.join('|')})(?: [a-z]*){0,${LONGEST_PHRASE_WORDS - 1}}|[${symbolChars}]+)$`, 'i');
})();

/**
 * The operator being typed before the cursor: from its first word (`is`, `does`, `has`, … — the
 * words the language's operator phrases start with) or symbol to the cursor, so `is at` completes
 * to `is at least` as one phrase; null when no operator is being typed.
 */
export function operatorPrefix(lineBefore: string): string | null {
  const phrase = OPERATOR_PREFIX.exec(lineBefore);
  return phrase ? phrase[1] : null;
}

/** Completion of the operator phrases from `GET /operators` (loaded once per editor). */
export function operatorCompletion(api: ArbiterClient): Extension {
  let loaded: Promise<OperatorsResponse> | null = null;
  const source = async (context: CompletionContext): Promise<CompletionResult | null> => {
    const phrase = operatorPrefix(context.state.sliceDoc(context.state.doc.lineAt(context.pos).from, context.pos));
    // Ctrl-Space anywhere completes from the word before the cursor
    const word = phrase ?? (context.explicit ? (context.matchBefore(/[a-z]+$/i)?.text ?? '') : null);
    if (word === null) return null;
    loaded ??= api.rules.operators().catch((): OperatorsResponse => {
      loaded = null;
      return [];
    });
    const operators = await loaded;
    const options = operators.flatMap((op) =>
      op.forms.map((form) => ({ label: form, detail: op.operator === form ? undefined : op.operator, type: 'keyword' })),
    );
    return { from: context.pos - word.length, options, validFor: /^[\w<>=! ]*$/ };
  };
  return autocompletion({ override: [source], activateOnTyping: true });
}

/** Everything the rule editor needs: language, live diagnostics, coverage underlines, a run's deciding conditions, completion. */
export function ruleExtensions(api: ArbiterClient, onValidate?: (reply: ValidateResponse | null) => void): Extension[] {
  return [ruleLanguage, ruleLinter(api, onValidate), coverageMarks(), reasonField, operatorCompletion(api)];
}
