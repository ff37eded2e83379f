/**
 * Steady load on a stack for the fault suite: workers loop over the request kinds a real caller
 * mixes (an ad-hoc run, a stored run, a list, a create) and record every answer with its time.
 */

export type Kind = 'run' | 'stored' | 'list' | 'create';
export const KINDS: Kind[] = ['run', 'stored', 'list', 'create'];

export interface Answer {
  kind: Kind;
  /** Which gateway answered: the index of its address in {@link LoadTarget.baseUrls}. */
  gateway: number;
  /** HTTP status; 0 when no answer came (connection refused or reset, or the client's own deadline). */
  status: number;
  /** Whether a 4xx/5xx came as an RFC 9457 problem (application/problem+json). */
  problem: boolean;
  startedAt: number;
  ms: number;
  /** The created policy's id, for a 201 of `create`. */
  createdId?: string;
}

export interface LoadTarget {
  /** The gateways: worker `w` sends to `baseUrls[w % baseUrls.length]`. */
  baseUrls: string[];
  key: string;
  /** A published policy's base id for stored runs (needed when the load has `stored`). */
  baseId?: string;
}

export interface LoadOptions {
  /** Concurrent callers (each waits for its answer before the next request): the load's bound. */
  workers?: number;
  /** The kinds each worker cycles through; every kind by default. */
  kinds?: readonly Kind[];
}

/** No request may take longer than this (the gateway's longest deadline to a service is 5 s). */
export const CLIENT_DEADLINE_MS = 10_000;

const RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';

function requestOf(kind: Kind, t: LoadTarget, n: number): { method: string; path: string; body?: unknown } {
  switch (kind) {
    case 'run':
      return { method: 'POST', path: '/run', body: { rule: RULE, data: { applicant: { age: n % 40 } } } };
    case 'stored':
      if (t.baseId === undefined) throw new Error('stored runs need a baseId');
      return { method: 'POST', path: `/run/policy/${t.baseId}`, body: { applicant: { age: n % 40 } } };
    case 'list':
      return { method: 'GET', path: '/policies?limit=5' };
    case 'create':
      return { method: 'POST', path: '/policy', body: { name: `fault-${n}`, rule: RULE } };
  }
}

async function send(kind: Kind, t: LoadTarget, gateway: number, n: number): Promise<Answer> {
  const { method, path, body } = requestOf(kind, t, n);
  const baseUrl = t.baseUrls[gateway];
  const startedAt = Date.now();
  try {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': t.key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(CLIENT_DEADLINE_MS),
    });
    const text = await res.text();
    const answer: Answer = {
      kind,
      gateway,
      status: res.status,
      problem: (res.headers.get('content-type') ?? '').startsWith('application/problem+json'),
      startedAt,
      ms: Date.now() - startedAt,
    };
    if (kind === 'create' && res.status === 201) answer.createdId = (JSON.parse(text) as { policyId: string }).policyId;
    return answer;
  } catch {
    return { kind, gateway, status: 0, problem: false, startedAt, ms: Date.now() - startedAt };
  }
}

/** Runs `workers` loops until `stop()`; `answers` grows as they come. */
export function startLoad(t: LoadTarget, opts: LoadOptions = {}): { answers: Answer[]; stop(): Promise<void> } {
  const { workers = 4, kinds = KINDS } = opts;
  const answers: Answer[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: workers }, async (_, w) => {
    const gateway = w % t.baseUrls.length;
    for (let i = w; running; i++) {
      answers.push(await send(kinds[i % kinds.length], t, gateway, n++));
      // A refused connection answers at once: do not spin while the gateway is down.
      if (answers.at(-1)!.status === 0) await new Promise((r) => setTimeout(r, 50));
    }
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
