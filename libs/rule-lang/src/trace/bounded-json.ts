/**
 * JSON text of a value for one trace line, at most about `maxChars` long. Up to the budget the
 * text is exactly `JSON.stringify(value)`; past it the text is cut and ends with `…`. The budget
 * also bounds the work: values built in memory may share sub-values (2^n paths through n levels)
 * or contain cycles, and a line must never print (or walk) all of that.
 */
export function boundedJson(value: unknown, maxChars = 240): string {
  let out = '';
  let full = false;
  const write = (s: string): void => {
    if (out.length + s.length > maxChars) {
      out += s.slice(0, maxChars - out.length);
      full = true;
    } else out += s;
  };
  // INVARIANT: every level writes at least one character, so recursion is at most maxChars deep.
  const visit = (v: unknown): void => {
    if (full) return;
    switch (typeof v) {
      case 'string':
        return write(JSON.stringify(v.length > maxChars ? v.slice(0, maxChars) : v));
      case 'number':
        return write(Number.isFinite(v) ? String(v) : 'null');
      case 'boolean':
        return write(v ? 'true' : 'false');
      case 'bigint':
        return write(String(v));
      case 'object':
        break;
      default:
        return write('null');
    }
    if (v === null) return write('null');
    if (Array.isArray(v)) {
      write('[');
      for (let i = 0; i < v.length && !full; i++) {
        if (i > 0) write(',');
        const x: unknown = v[i];
        visit(x === undefined || typeof x === 'function' || typeof x === 'symbol' ? null : x);
      }
      return write(']');
    }
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return visit(toJSON.call(v));
    write('{');
    let first = true;
    for (const k in v) {
      if (full) break;
      if (!Object.hasOwn(v, k)) continue;
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      if (!first) write(',');
      first = false;
      write(JSON.stringify(k));
      write(':');
      visit(x);
    }
    write('}');
  };
  visit(value);
  return full ? `${out}…` : out;
}
