/**
 * The per-call overhead case: a 7-rule policy of 9 cheap comparisons (numbers,
 * a string, a short list; no dates, no any/all), so that what an evaluation costs besides its
 * comparisons (options, step budget, rule states, the result objects) shows. Its floor is a
 * hand-written function giving the same answer: result, every outcome, and the engine's error
 * message for missing data. `test/bench-policy.test.ts` checks that the two agree. No rule-lang
 * import here: the bench and the test bring their own build of the library.
 */

export const LOAN_POLICY = `# Loan: six checks, nine comparisons.
An **applicant** is approved for a loan
  if the **applicant** passes the income check
  and the **applicant** passes the credit check
  and $residency is satisfied
  and the **applicant** has a stable job
  and $age is satisfied
  and the **loan** is affordable.

An **applicant** passes the income check
  if the __income__ of the **applicant** is at least 30000.

An **applicant** passes the credit check
  if the __credit score__ of the **applicant** is greater than 650
  and the __defaults__ of the **applicant** is less than 1.

residency: if applicant.country is in ["DK", "SE", "NO"] -> resident.

An **applicant** has a stable job
  if the __employment__ of the **applicant** is "permanent"
  or the __years employed__ of the **applicant** is at least 3.

age: if applicant.age >= 18 -> adult.

A **loan** is affordable
  if the __amount__ of the **loan** is no more than 250000
  and the __term__ of the **loan** is no more than 30.
`;

export const LOAN_OUTCOMES = [
  'approved for a loan',
  'the income check',
  'the credit check',
  'resident',
  'a stable job',
  'adult',
  'affordable',
] as const;

export interface LoanApplication {
  applicant: {
    income: number;
    creditScore: number;
    defaults: number;
    country: string;
    employment: string;
    yearsEmployed: number;
    age: number;
  };
  loan: { amount: number; term: number };
}

/** Data that passes every rule. */
export function loanData(): LoanApplication {
  return {
    applicant: { income: 52_000, creditScore: 720, defaults: 0, country: 'DK', employment: 'permanent', yearsEmployed: 5, age: 34 },
    loan: { amount: 200_000, term: 25 },
  };
}

export type LoanResult =
  | { result: boolean; outcomes: Record<(typeof LOAN_OUTCOMES)[number], boolean>; error?: undefined }
  | { result: false; outcomes: Record<string, never>; error: string };

class Missing {
  constructor(readonly message: string) {}
}

function selector<T>(v: T | undefined, name: string): T {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- mirrors the engine's sentinel
  if (v === undefined) throw new Missing(`Missing selector: ${name}`);
  return v;
}

function property<T>(v: T | undefined, path: string): T {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- mirrors the engine's sentinel
  if (v === undefined) throw new Missing(`Missing property: ${path}`);
  return v;
}

const COUNTRIES = new Set(['DK', 'SE', 'NO']);

/**
 * The policy by hand: every comparison evaluated, in the engine's order (so the first missing
 * datum is the one the engine reports), the outcomes map, the engine's error messages.
 */
export function loanHandWritten(data: LoanApplication): LoanResult {
  try {
    const a = selector(data.applicant, 'applicant');
    const income = property(a.income, 'applicant.income') >= 30_000;
    const score = property(a.creditScore, 'applicant.credit score') > 650;
    const defaults = property(a.defaults, 'applicant.defaults') < 1;
    const credit = score && defaults;
    const resident = COUNTRIES.has(property(a.country, 'applicant.country'));
    const permanent = property(a.employment, 'applicant.employment').toLowerCase() === 'permanent';
    const years = property(a.yearsEmployed, 'applicant.years employed') >= 3;
    const stable = permanent || years;
    const adult = property(a.age, 'applicant.age') >= 18;
    const l = selector(data.loan, 'loan');
    const amount = property(l.amount, 'loan.amount') <= 250_000;
    const term = property(l.term, 'loan.term') <= 30;
    const affordable = amount && term;
    const result = income && credit && resident && stable && adult && affordable;
    return {
      result,
      outcomes: {
        'approved for a loan': result,
        'the income check': income,
        'the credit check': credit,
        resident,
        'a stable job': stable,
        adult,
        affordable,
      },
    };
  } catch (err) {
    if (err instanceof Missing) return { result: false, outcomes: {}, error: err.message };
    throw err;
  }
}
