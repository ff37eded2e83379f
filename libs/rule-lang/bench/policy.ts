/**
 * The benchmark policy (driving-licence style, LANGUAGE.md §1–§8) and the same logic written three
 * other ways: a hand-written JavaScript function (the floor), json-rules-engine and
 * @marcbachmann/cel-js. `test/bench-policy.test.ts` checks that all four agree, so the comparison is
 * honest. No rule-lang import here: the bench and the test bring their own build of the library.
 */

import { parse as celParse } from '@marcbachmann/cel-js';
import { Engine, type TopLevelCondition } from 'json-rules-engine';

/** Seven rules: references by outcome and by label, nested navigation, a list, dates, any/all, a shorthand rule. */
export const POLICY = `# Driving licence: may the applicant be issued a category B licence?
An **applicant** is granted a driving licence
  if the **driver** passes the age check
  and the **driver** holds a valid licence
  and $medical is satisfied
  and the **application** passes the document check
  and $record is satisfied
  and the **application** has a settled fee.

age. A **driver** passes the age check
  if the __date of birth__ of the **driver** in the **application** is older than 17 years.

A **driver** holds a valid licence
  if the __country__ of the __licence__ of the **driver** in the **application** is in ["DK", "SE", "NO", "DE", "NL"]
  and the __issued on__ of the __licence__ of the **driver** in the **application** is within 10 years
  and any of the __categories__ of the __licence__ of the **driver** in the **application** where (its is "B").

medical: if application.medical.vision >= 0.5 and application.medical.status == "fit" -> medical clearance.

An **application** passes the document check
  if all of the __documents__ of the **application** satisfies (its __verified__ is true and its __kind__ is in ["passport", "photo", "proof of address"])
  and the number of __documents__ of the **application** is at least 2.

record. A **driver** has a clean record
  if the __penalty points__ of the **driver** in the **application** is less than 12
  and all of the __offences__ of the **driver** in the **application** satisfies (its __severity__ is not "major").

An **application** has a settled fee
  if the __paid__ of the __fee__ of the **application** is true
  or the __exempt__ of the __fee__ of the **application** is true.
`;

/** Outcome names of {@link POLICY} in text order (what `evaluate(...).outcomes` is keyed by). */
export const OUTCOMES = [
  'granted a driving licence',
  'the age check',
  'a valid licence',
  'medical clearance',
  'the document check',
  'a clean record',
  'a settled fee',
] as const;

export type Outcomes = Record<(typeof OUTCOMES)[number], boolean>;

export interface LicenceApplication {
  application: {
    category: string;
    driver: {
      name: string;
      dateOfBirth: string;
      penaltyPoints: number;
      licence: { country: string; issuedOn: string; categories: string[] };
      offences: { severity: string; date: string }[];
    };
    medical: { vision: number; status: string };
    documents: { kind: string; verified: boolean }[];
    fee: { paid: boolean; exempt: boolean };
  };
}

/** Data that passes every rule while its licence is under 10 years old (issued 2019-06-01). */
export function passingData(): LicenceApplication {
  return {
    application: {
      category: 'B',
      driver: {
        name: 'Mara Jensen',
        dateOfBirth: '1990-04-12',
        penaltyPoints: 3,
        licence: { country: 'DK', issuedOn: '2019-06-01', categories: ['AM', 'B', 'BE'] },
        offences: [
          { severity: 'minor', date: '2021-03-02' },
          { severity: 'minor', date: '2023-11-17' },
        ],
      },
      medical: { vision: 0.8, status: 'fit' },
      documents: [
        { kind: 'passport', verified: true },
        { kind: 'photo', verified: true },
        { kind: 'proof of address', verified: true },
      ],
      fee: { paid: true, exempt: false },
    },
  };
}

/** A clock in epoch milliseconds (injected so that tests can fix "today"). */
export type Clock = () => number;

const DAY_MS = 86_400_000;

/**
 * UTC midnight (ms) of the UTC day of `dayMs` shifted by `years` calendar years, the day of month
 * clamped to the target month's length (29 Feb − 1 year = 28 Feb), as LANGUAGE.md §6.5 says.
 */
export function shiftYears(dayMs: number, years: number): number {
  const d = new Date(dayMs);
  const y = d.getUTCFullYear() + years;
  const m = d.getUTCMonth();
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(d.getUTCDate(), lastDay));
}

/** The policy's date bounds for one UTC day, as ms and as Dates (CEL compares timestamps). */
interface Cutoffs {
  day: number;
  /** Born strictly before this day → older than 17 years. */
  birth: number;
  /** A licence issued within [licenceFrom, licenceTo] is within 10 years. */
  licenceFrom: number;
  licenceTo: number;
  birthDate: Date;
  licenceFromDate: Date;
  licenceToDate: Date;
}

let cached: Cutoffs | null = null;

/** The bounds for the UTC day of `nowMs`, recomputed only when the day changes (as rule-lang caches its period bounds). */
export function cutoffsFor(nowMs: number): Cutoffs {
  const day = Math.floor(nowMs / DAY_MS);
  if (cached === null || cached.day !== day) {
    const dayMs = day * DAY_MS;
    const birth = shiftYears(dayMs, -17);
    const licenceFrom = shiftYears(dayMs, -10);
    const licenceTo = shiftYears(dayMs, 10);
    cached = {
      day,
      birth,
      licenceFrom,
      licenceTo,
      birthDate: new Date(birth),
      licenceFromDate: new Date(licenceFrom),
      licenceToDate: new Date(licenceTo),
    };
  }
  return cached;
}

/** Same-shaped answer as rule-lang's `evaluate` (result + every outcome), or an error for missing data. */
export type HandResult =
  { result: boolean; outcomes: Outcomes; error?: undefined } | { result: false; outcomes: Record<string, never>; error: string };

class Missing {
  constructor(readonly message: string) {}
}

function need<T>(v: T | undefined, path: string): T {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- mirrors the engine's sentinel
  if (v === undefined) throw new Missing(path);
  return v;
}

const COUNTRIES = new Set(['DK', 'SE', 'NO', 'DE', 'NL']);
const DOCUMENT_KINDS = new Set(['passport', 'photo', 'proof of address']);

/**
 * The policy as a JavaScript developer would write it by hand: the floor. Parses the date strings,
 * evaluates every rule (the outcomes map needs them all) and reports missing data as an error.
 */
export function handWritten(data: LicenceApplication, nowMs: number = Date.now()): HandResult {
  try {
    const c = cutoffsFor(nowMs);
    const app = need(data.application, 'application');
    const driver = need(app.driver, 'application.driver');
    const licence = need(driver.licence, 'application.driver.licence');

    const ageCheck = Date.parse(need(driver.dateOfBirth, 'application.driver.date of birth')) < c.birth;

    const issued = Date.parse(need(licence.issuedOn, 'application.driver.licence.issued on'));
    const categories = need(licence.categories, 'application.driver.licence.categories');
    const validLicence =
      COUNTRIES.has(need(licence.country, 'application.driver.licence.country')) &&
      issued >= c.licenceFrom &&
      issued <= c.licenceTo &&
      Array.isArray(categories) &&
      categories.includes('B');

    const medical = need(app.medical, 'application.medical');
    const medicalClearance =
      need(medical.vision, 'application.medical.vision') >= 0.5 && need(medical.status, 'application.medical.status') === 'fit';

    const documents = need(app.documents, 'application.documents');
    const documentCheck =
      Array.isArray(documents) && documents.every((d) => d.verified === true && DOCUMENT_KINDS.has(d.kind)) && documents.length >= 2;

    const offences = need(driver.offences, 'application.driver.offences');
    const cleanRecord =
      need(driver.penaltyPoints, 'application.driver.penalty points') < 12 &&
      Array.isArray(offences) &&
      offences.every((o) => o.severity !== 'major');

    const fee = need(app.fee, 'application.fee');
    const settledFee = fee.paid === true || fee.exempt === true;

    const result = ageCheck && validLicence && medicalClearance && documentCheck && cleanRecord && settledFee;
    return {
      result,
      outcomes: {
        'granted a driving licence': result,
        'the age check': ageCheck,
        'a valid licence': validLicence,
        'medical clearance': medicalClearance,
        'the document check': documentCheck,
        'a clean record': cleanRecord,
        'a settled fee': settledFee,
      },
    };
  } catch (err) {
    if (err instanceof Missing) return { result: false, outcomes: {}, error: `Missing: ${err.message}` };
    throw err;
  }
}

/** Days of a `YYYY-MM-DD` fact as ms, or NaN. */
function dateMs(v: unknown): number {
  return typeof v === 'string' ? Date.parse(v) : NaN;
}

/**
 * The policy in json-rules-engine: the six referenced rules as named shared conditions, the
 * golden rule as the one engine rule; `in`/`contains`/`doesNotContain`/`everyFact:*` for the lists
 * and two custom operators for the calendar checks. Built once; `run` is async.
 */
export function buildJsonRulesEngine(clock: Clock = Date.now): { run(data: LicenceApplication): Promise<boolean> } {
  const engine = new Engine([], { allowUndefinedFacts: false });
  engine.addOperator<unknown, number>(
    'olderThanYears',
    (fact, years) => dateMs(fact) < shiftYears(cutoffsFor(clock()).day * DAY_MS, -years),
  );
  engine.addOperator<unknown, number>('withinYears', (fact, years) => {
    const day = cutoffsFor(clock()).day * DAY_MS;
    const ms = dateMs(fact);
    return ms >= shiftYears(day, -years) && ms <= shiftYears(day, years);
  });
  const driver = (path: string) => ({ fact: 'application', path: `$.driver.${path}` });
  const app = (path: string) => ({ fact: 'application', path: `$.${path}` });
  const conditions: Record<string, TopLevelCondition> = {
    ageCheck: { all: [{ ...driver('dateOfBirth'), operator: 'olderThanYears', value: 17 }] },
    validLicence: {
      all: [
        { ...driver('licence.country'), operator: 'in', value: ['DK', 'SE', 'NO', 'DE', 'NL'] },
        { ...driver('licence.issuedOn'), operator: 'withinYears', value: 10 },
        { ...driver('licence.categories'), operator: 'contains', value: 'B' },
      ],
    },
    medical: {
      all: [
        { ...app('medical.vision'), operator: 'greaterThanInclusive', value: 0.5 },
        { ...app('medical.status'), operator: 'equal', value: 'fit' },
      ],
    },
    documentCheck: {
      all: [
        { ...app('documents[*].verified'), operator: 'everyFact:equal', value: true },
        { ...app('documents[*].kind'), operator: 'everyFact:in', value: ['passport', 'photo', 'proof of address'] },
        { ...app('documents.length'), operator: 'greaterThanInclusive', value: 2 },
      ],
    },
    record: {
      all: [
        { ...driver('penaltyPoints'), operator: 'lessThan', value: 12 },
        { ...driver('offences[*].severity'), operator: 'doesNotContain', value: 'major' },
      ],
    },
    settledFee: {
      any: [
        { ...app('fee.paid'), operator: 'equal', value: true },
        { ...app('fee.exempt'), operator: 'equal', value: true },
      ],
    },
  };
  for (const [name, condition] of Object.entries(conditions)) engine.setCondition(name, condition);
  engine.addRule({
    name: 'granted a driving licence',
    conditions: { all: Object.keys(conditions).map((condition) => ({ condition })) },
    event: { type: 'granted' },
  });
  return {
    async run(data) {
      const { events } = await engine.run(data);
      return events.length === 1;
    },
  };
}

/** The policy as one CEL expression; the date bounds come in as timestamps (CEL has no calendar years). */
export const CEL_EXPRESSION = `
  timestamp(application.driver.dateOfBirth + "T00:00:00Z") < birthCutoff
  && application.driver.licence.country in ["DK", "SE", "NO", "DE", "NL"]
  && timestamp(application.driver.licence.issuedOn + "T00:00:00Z") >= licenceFrom
  && timestamp(application.driver.licence.issuedOn + "T00:00:00Z") <= licenceTo
  && application.driver.licence.categories.exists(c, c == "B")
  && application.medical.vision >= 0.5 && application.medical.status == "fit"
  && application.documents.all(d, d.verified == true && d.kind in ["passport", "photo", "proof of address"])
  && size(application.documents) >= 2
  && application.driver.penaltyPoints < 12
  && application.driver.offences.all(o, o.severity != "major")
  && (application.fee.paid == true || application.fee.exempt == true)`;

/** CEL: parsed once; each call builds the activation (data + today's bounds) and evaluates. */
export function buildCel(clock: Clock = Date.now): (data: LicenceApplication) => boolean {
  const program = celParse(CEL_EXPRESSION);
  return (data) => {
    const c = cutoffsFor(clock());
    return (
      program({
        application: data.application,
        birthCutoff: c.birthDate,
        licenceFrom: c.licenceFromDate,
        licenceTo: c.licenceToDate,
      }) === true
    );
  };
}
