/** An unpaired UTF-16 surrogate: in `u` mode a well-formed pair is one code point, so only a lone half matches. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/**
 * Whether PostgreSQL can store and compare `text`: no U+0000 (a `text` column refuses it) and no
 * unpaired UTF-16 surrogate (a `jsonb` value refuses its `\ud800` escape, and UTF-8 cannot encode it).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** Whether `text` holds an unpaired UTF-16 surrogate. */
export function hasUnpairedSurrogate(text: string): boolean {
  return UNPAIRED_SURROGATE.test(text);
}
