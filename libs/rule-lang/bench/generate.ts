/** Generated inputs: N-rule policies for the compile sweep, and the pathological inputs. */

/** Comparisons cycled through by the generated rules: mixed operators, both path styles. */
const COMPARISONS: readonly ((k: number) => string)[] = [
  (k) => `the __age__ of the **applicant** is at least ${k % 18}`,
  (k) => `applicant.score > ${k}`,
  (k) => `the __country__ of the __address__ of the **applicant** is in ["DK", "SE", "C${k}"]`,
  () => `the __email__ of the **applicant** is a valid email`,
  (k) => `the __name__ of the **applicant** matches pattern "^[A-Z][a-z]+( ${k})?$"`,
  (k) => `the __joined__ of the **applicant** is earlier than 2030-01-${String((k % 28) + 1).padStart(2, '0')}`,
  (k) => `any of the __tags__ of the **applicant** where (its is "t${k}" or its is "vip")`,
  (k) => `the length of the __name__ of the **applicant** is no more than ${50 + k}`,
  (k) => `applicant.address.city != "Nowhere ${k}"`,
  (k) => `the __member since__ of the **applicant** is older than ${(k % 5) + 1} years`,
];

/** Data under which every generated policy evaluates without error. */
export const GENERATED_DATA = {
  applicant: {
    age: 30,
    score: 1_000_000,
    address: { country: 'DK', city: 'Aarhus' },
    email: 'mara@fjordstay.example',
    name: 'Mara',
    joined: '2020-01-01',
    tags: ['vip', 'early'],
    memberSince: '2001-05-05',
  },
};

/**
 * A policy of `n` rules forming a binary tree of references (rule i refers to rules 2i+1 and 2i+2),
 * so rule 0 is the one golden rule. Rules alternate between a verbose rule referenced by outcome,
 * a labelled verbose rule and a labelled shorthand rule referenced by `$label`; each has two
 * comparisons (joined by `and` or `or`) besides its references.
 */
export function generatePolicy(n: number): string {
  const labelled = (i: number) => i % 3 !== 0;
  const ref = (i: number) => (labelled(i) ? `$r${i}` : `the **applicant** passes check ${i}`);
  const rules: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = COMPARISONS[i % COMPARISONS.length](i);
    const b = COMPARISONS[(i * 7 + 3) % COMPARISONS.length](i + 1);
    const parts = [`${a} ${i % 4 === 3 ? 'or' : 'and'} ${b}`];
    for (const child of [2 * i + 1, 2 * i + 2]) if (child < n) parts.push(ref(child));
    const conditions = parts.join('\n  and ');
    if (i % 3 === 2) rules.push(`r${i}: if ${conditions}\n  -> check ${i}.`);
    else rules.push(`${labelled(i) ? `r${i}. ` : ''}An **applicant** passes check ${i}\n  if ${conditions}.`);
  }
  return `# generated: ${n} rules\n${rules.join('\n\n')}\n`;
}

/** Depth of the deep-nesting input: the data is this many objects deep. */
export const DEPTH = 64;

/** A rule reading the value at the bottom of {@link deepData}: 63 selector segments and a property. */
export function deepPolicy(): string {
  const segments = Array.from({ length: DEPTH - 1 }, (_, i) => `level${i}`);
  return `A **probe** reaches the bottom if the __leaf value__ of the **${segments.join('.')}** is "bottom".`;
}

/** `{level0: {level1: … {level62: {leafValue: "bottom"}}}}`: 64 objects deep. */
export function deepData(): Record<string, unknown> {
  let node: Record<string, unknown> = { leafValue: 'bottom' };
  for (let i = DEPTH - 2; i >= 0; i--) node = { [`level${i}`]: node };
  return node;
}

const LEVEL_KEYS = Array.from({ length: DEPTH - 1 }, (_, i) => `level${i}`);

/** Hand-written lookup of the same leaf (the floor for the deep input). */
export function deepHandWritten(data: Record<string, unknown>): boolean {
  let v: unknown = data;
  for (let i = 0; i < LEVEL_KEYS.length; i++) {
    if (typeof v !== 'object' || v === null) return false;
    v = (v as Record<string, unknown>)[LEVEL_KEYS[i]];
  }
  return typeof v === 'object' && v !== null && (v as Record<string, unknown>).leafValue === 'bottom';
}

/** Size of the large array. */
export const ITEMS = 10_000;

/** `all` and `any` over {@link ITEMS} order lines, two conditions per element each. */
export const LARGE_ARRAY_POLICY = `A **order** can ship
  if all of the __lines__ of the **order** satisfies (its __qty__ is at least 1 and its __qty__ is no more than 100)
  and any of the __lines__ of the **order** where (its __sku__ is "SKU-09999" and its __qty__ > 0).`;

export interface Order {
  order: { lines: { sku: string; qty: number }[] };
}

export function largeArrayData(): Order {
  return {
    order: { lines: Array.from({ length: ITEMS }, (_, i) => ({ sku: `SKU-${String(i).padStart(5, '0')}`, qty: (i % 100) + 1 })) },
  };
}

/** Hand-written floor for the large array (no short-circuit in `any`, like the language). */
export function largeArrayHandWritten(data: Order): boolean {
  const lines = data.order.lines;
  let all = true;
  let any = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (!(l.qty >= 1 && l.qty <= 100)) all = false;
    if (l.sku === 'SKU-09999' && l.qty > 0) any = true;
  }
  return all && any;
}
