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
