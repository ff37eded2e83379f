/** Value semantics of the rule language (§6, §7.2, §7.3): pure functions used by the compiled closures. */
export { toNumber, isNumericString } from './numbers.js';
export { toDay, toInstant, nowInDays, dayFromDateText, dayToText, dayOfInstant, isLeapYear, daysInMonth, daysFromCivil } from './dates.js';
export type { PeriodUnit } from './periods.js';
export { unitFromWord, isCalendarUnit, shiftDay, instantPeriodDays } from './periods.js';
export { looseEquals, compileLooseEquals, strictEquals, isEmptyValue, isIn, compileIsIn, booleanLike } from './equality.js';
export { containsWord, compileContainsWord, containsValue } from './contains.js';
export { FORMAT_NAMES, formatChecker } from './formats.js';
export type { CompiledPattern } from './patterns.js';
export { compilePattern } from './patterns.js';
