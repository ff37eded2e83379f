import { ArbiterClient, ArbiterError } from '@arbiter/sdk/client';
import type { Credentials } from './credentials.js';

/** One attempt's deadline. */
const TIMEOUT_MS = 30_000;

/**
 * The console's client of the public API: the SDK's typed client (`@arbiter/sdk/client`), signed
 * with the tab's credentials, against the gateway that serves the console. Nothing is sent twice:
 * a person sees the failure and decides (retries off).
 */
export function consoleClient(credentials: Credentials, baseUrl = window.location.origin): ArbiterClient {
  const auth = credentials.kind === 'apiKey' ? { apiKey: credentials.value } : { token: credentials.value };
  return new ArbiterClient({ baseUrl, ...auth, timeoutMs: TIMEOUT_MS, retries: { max: 0 } });
}

/** The text to show for a failed call: the problem's `detail`, plus its listed reasons. */
export function problemText(err: unknown): string {
  if (err instanceof ArbiterError) {
    // reasons the detail already says are not repeated
    const reasons = (err.errors ?? []).map((e) => e.message).filter((m) => !!m && !err.message.includes(m));
    return reasons.length ? `${err.message}: ${reasons.join('; ')}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
