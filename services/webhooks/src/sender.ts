import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveTarget, type AddressPolicy } from './address.js';
import type { SignedHeaders } from './signing.js';

/** Bytes of an answer kept with its attempt. */
export const RESPONSE_KEPT_BYTES = 1024;

/** What one attempt came to: the answer's status (null without one), its first KiB, how long, and the error when there was no answer. */
export interface SendResult {
  statusCode: number | null;
  response: string | null;
  durationMs: number;
  error: string | null;
  /** The attempt was never made: the address is refused. */
  refused?: boolean;
}

/** Settings of {@link sendDelivery}. */
export interface SendOptions extends AddressPolicy {
  timeoutMs: number;
  userAgent: string;
}

/**
 * POSTs one signed body to an endpoint: the host is resolved and checked now, the connection goes to
 * that checked address (TLS still verifies the host name), redirects are answers like any other
 * (never followed), and the whole attempt — connecting, sending, the status and the first KiB of the
 * answer — has `timeoutMs`. Never throws.
 */
export async function sendDelivery(rawUrl: string, body: string, signed: SignedHeaders, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target;
  let timer: NodeJS.Timeout | undefined;
  try {
    // The name's resolution counts against the attempt's deadline too.
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${opts.timeoutMs} ms (resolving the host)`)), opts.timeoutMs);
    });
    target = await Promise.race([resolveTarget(rawUrl, opts), late]);
  } catch (err) {
    const refused = err instanceof Error && err.name === 'RefusedAddress';
    return { statusCode: null, response: null, durationMs: elapsed(), error: errorText(err), ...(refused ? { refused } : {}) };
  } finally {
    clearTimeout(timer);
  }
  const left = Math.max(1, opts.timeoutMs - elapsed());
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      resolve({ ...r, durationMs: elapsed() });
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': opts.userAgent,
          ...signed,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish({
            statusCode: res.statusCode ?? null,
            response: Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8'),
            error: null,
          });
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_KEPT_BYTES) done();
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const deadline = setTimeout(() => finish({ statusCode: null, response: null, error: `no answer within ${opts.timeoutMs} ms` }), left);
    req.on('error', (err) => finish({ statusCode: null, response: null, error: errorText(err) }));
    req.end(body);
  });
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const text =
    e.code !== undefined && e.message !== undefined && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : (e.message ?? String(err));
  return text.slice(0, RESPONSE_KEPT_BYTES);
}
