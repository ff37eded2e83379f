import { RunnableChanged, RunnableSubject, type Principal } from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import type { Subscription } from '@nats-io/transport-node';
import type { RunnableClient } from './runnable-client.js';

/** Told each time an org's revision is seen to grow. */
export type RevisionListener = (revision: number) => void;

interface OrgWatch {
  latest: number;
  listeners: Set<RevisionListener>;
  /** A caller of the org whose `view` right the poll uses (the first watcher's). */
  principal: Principal;
  timer: NodeJS.Timeout;
}

/**
 * The runnable revisions of the orgs whose change streams this gateway serves: pushed by the
 * registry's `runnable.changed` notifications (core NATS, one subscription per gateway), and
 * polled every `pollMs` per watched org as a safety net for a notification lost on the way. Each
 * listener hears every growth of its org's revision once.
 */
export class RunnableWatch {
  private readonly orgs = new Map<string, OrgWatch>();
  private readonly sub: Subscription;

  constructor(
    bus: Pick<Bus, 'nc' | 'subject'>,
    private readonly client: Pick<RunnableClient, 'revision'>,
    private readonly pollMs: number,
    private readonly warn: (err: unknown, message: string) => void = () => undefined,
  ) {
    this.sub = bus.nc.subscribe(bus.subject(RunnableSubject.changed), {
      callback: (err, msg) => {
        if (err) return;
        const parsed = RunnableChanged.safeParse(safeJson(msg.string()));
        if (parsed.success) this.seen(parsed.data.orgId, parsed.data.revision);
      },
    });
  }

  /**
   * The org's current revision (asked of the registry), then `listener` hears each later growth
   * until the returned function is called.
   */
  async watch(principal: Principal, listener: RevisionListener): Promise<{ revision: number; stop: () => void }> {
    const revision = await this.client.revision(principal);
    let org = this.orgs.get(principal.orgId);
    if (org === undefined) {
      const orgId = principal.orgId;
      org = { latest: revision, listeners: new Set(), principal, timer: setInterval(() => void this.poll(orgId), this.pollMs).unref() };
      this.orgs.set(orgId, org);
    }
    this.seen(principal.orgId, revision);
    org.listeners.add(listener);
    const watched = org;
    return {
      revision: Math.max(revision, watched.latest),
      stop: () => {
        watched.listeners.delete(listener);
        if (watched.listeners.size === 0 && this.orgs.get(principal.orgId) === watched) {
          clearInterval(watched.timer);
          this.orgs.delete(principal.orgId);
        }
      },
    };
  }

  /** The latest revision seen for a watched org. */
  latest(orgId: string): number | undefined {
    return this.orgs.get(orgId)?.latest;
  }

  /** Stops the subscription and the polls. */
  close(): void {
    this.sub.unsubscribe();
    for (const org of this.orgs.values()) clearInterval(org.timer);
    this.orgs.clear();
  }

  private seen(orgId: string, revision: number): void {
    const org = this.orgs.get(orgId);
    if (org === undefined || revision <= org.latest) return;
    org.latest = revision;
    for (const listener of [...org.listeners]) listener(revision);
  }

  private async poll(orgId: string): Promise<void> {
    const org = this.orgs.get(orgId);
    if (org === undefined) return;
    try {
      this.seen(orgId, await this.client.revision(org.principal));
    } catch (err) {
      this.warn(err, 'runnable revision poll failed');
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
