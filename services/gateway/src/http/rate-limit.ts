import type { FastifyReply } from 'fastify';
import { limitExceeded, rateLimitHeaders, type RateUse } from '@arbiter/key-auth';

/**
 * Holds a request to its rate limit, as authentication counted it (an API key: the tighter of its
 * key's and its owner's counts, against `RATE_LIMIT_MAX`; a bearer: its person's count, against
 * `RATE_LIMIT_PERSON_MAX`): `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset`
 * (seconds) on the answer, and past the limit a 429 `rate_limited` problem with `retry-after`.
 * Called again after a batch's items are counted, so the headers include them; `counted` says what
 * counted in the refusal when not plain requests.
 */
export function applyRateLimit(reply: FastifyReply, use: RateUse, counted = ''): void {
  reply.headers(rateLimitHeaders(use));
  if (use.current > use.max) throw limitExceeded(use, counted);
}
