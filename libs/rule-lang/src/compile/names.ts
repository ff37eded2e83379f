/** Written name → JSON key candidates (LANGUAGE.md §4.4). */

/** Splits at spaces, underscores and hyphens, and between a lower-case letter or digit and an upper-case letter. */
function words(name: string): string[] {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .split(/[\s_-]+/)
    .filter((w) => w !== '');
}

export function camelCase(name: string): string {
  return words(name)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}

export function snakeCase(name: string): string {
  return words(name)
    .map((w) => w.toLowerCase())
    .join('_');
}

/** The keys to try, in order, without duplicates: exact, camelCase, snake_case. */
export function keyCandidates(name: string): string[] {
  return [...new Set([name, camelCase(name), snakeCase(name)].filter((k) => k !== ''))];
}

/**
 * The name behind a key, whatever its spelling: two names a rule could reach with one written name
 * (`credit score`, `creditScore`, `credit_score`, `CreditScore`: §4.4's candidates of some written
 * name) have the same family. Used where every spelling of a key must be found (decision masks),
 * never for lookups, which stay exact → camelCase → snake_case. A name with no words (`_`, `-`) is
 * its own family.
 */
export function keyFamily(name: string): string {
  // camelCase again until it settles: upper-casing a word's first letter can make two letters of
  // one (`ß` → `SS`), which the next split reads as a boundary.
  let family = camelCase(name);
  for (let i = 0; i < 4; i++) {
    const again = camelCase(family);
    if (again === family) break;
    family = again;
  }
  return family === '' ? name : family;
}
