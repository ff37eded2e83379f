import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks form). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a body with each secret given (the current one, then the previous one while it still
 * signs): `webhook-signature` lists one `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret,
 * space-separated, so a receiver holding either secret verifies it.
 */
export function signBody(id: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(id, at, body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
