import { ArbiterClient } from './client.js';
import type { LocalOptions, LocalRuntime } from './local/runtime.js';

/**
 * The Arbiter client ({@link ArbiterClient}) with local evaluation: `arbiter.local()` loads
 * published policies and flows and runs them in this process.
 *
 * ```ts
 * const arbiter = new Arbiter({ baseUrl: 'http://localhost:8080', apiKey: process.env.ARBITER_API_KEY! });
 * const runtime = await arbiter.local({ bases: [baseId] });
 * ```
 */
export class Arbiter extends ArbiterClient {
  /**
   * Loads the runnable records of the chosen bases (every base the caller sees when none is
   * chosen), compiles them once and keeps them in sync; runs then answer in-process exactly as
   * `POST /run/policy/{baseId}` would. Needs an API key with `view` (as runs do). See
   * `@arbiter/sdk/local` for the runtime.
   */
  async local(options: LocalOptions = {}): Promise<LocalRuntime> {
    const { startLocalRuntime } = await import('./local/runtime.js');
    return startLocalRuntime(this, options);
  }
}
