/**
 * Test support the service packages share, written against the shapes they use (a JetStream manager,
 * an error predicate) so that test-kit needs none of the packages it helps test.
 */

/** What {@link streamMessages} needs of a JetStream manager (`@nats-io/jetstream`'s `JetStreamManager` fits). */
export interface StreamReader<M> {
  streams: {
    info(stream: string): Promise<{ state: { first_seq: number; last_seq: number; messages: number } }>;
    getMessage(stream: string, query: { seq: number }): Promise<M | null>;
  };
}

/** Every message of a JetStream stream, oldest first (none when the stream is empty; deleted sequences skipped). */
export async function streamMessages<M>(jsm: StreamReader<M>, stream: string): Promise<M[]> {
  const { state } = await jsm.streams.info(stream);
  const out: M[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const msg = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (msg) out.push(msg);
  }
  return out;
}

/**
 * The error `promise` rejects with, when `isExpected` recognises it (an `ArbiterError`, say); any other
 * error is rethrown, and a fulfilled promise fails with "expected `what` to fail".
 */
export async function rejectionOf<E>(promise: Promise<unknown>, isExpected: (err: unknown) => err is E, what = 'the call'): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (isExpected(err)) return err;
    throw err;
  }
  throw new Error(`expected ${what} to fail`);
}

/** A caller as the gateway sends it on the bus, with the roles and scopes of the package's contracts. */
export interface TestPrincipal<Role extends string, Scope extends string> {
  orgId: string;
  userId: string;
  role: Role;
  scopes?: Scope[];
}

/**
 * The maker of test callers for the given role and scope types: `as(role, opts)` is a caller of org
 * `orgId` (`acme` by default) with `role`, the user id defaulting to the role's name.
 */
export function principals<Role extends string, Scope extends string>(): (
  role: Role,
  opts?: { orgId?: string; userId?: string; scopes?: Scope[] },
) => TestPrincipal<Role, Scope> {
  return (role, opts = {}) => ({
    orgId: opts.orgId ?? 'acme',
    userId: opts.userId ?? role,
    role,
    ...(opts.scopes ? { scopes: opts.scopes } : {}),
  });
}
