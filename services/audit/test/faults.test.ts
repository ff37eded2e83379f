import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArbiterEvent } from '@arbiter/contracts';
import { eventually } from '@arbiter/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { event, freePort, startTestEnv, type TestEnv } from './support.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const children: ChildProcess[] = [];
let env: TestEnv | undefined;

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await env?.close();
  env = undefined;
});

/** The built audit service as its own process (`dist/main.js`), as it is deployed. */
function spawnAudit(vars: Record<string, string>): ChildProcess {
  if (!existsSync(MAIN)) throw new Error('build the audit service first (`npm run build`)');
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...vars }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

async function duplicates(t: TestEnv): Promise<number> {
  const { rows } = (await t.sql.raw(`select count(*) - count(distinct event_id) as d from audit_events`)) as { rows: { d: string }[] };
  return Number(rows[0]?.d);
}

function burst(n: number, orgId: string): ArbiterEvent[] {
  return Array.from({ length: n }, () => event('executed', { orgId, details: { aggregated: true, count: 1 } }));
}

describe('no loss', () => {
  it('kill -9 of the audit process while thousands of events flow: after a restart every event is stored once', async () => {
    const t = (env = await startTestEnv());
    const vars = { ...t.env, AUDIT_BATCH_SIZE: '200' };
    let child = spawnAudit(vars);
    const total = 6000;
    const events = burst(total, 'kill-org');
    let published = 0;
    const publishing = (async () => {
      for (let i = 0; i < total; i += 250) {
        await t.publish(events.slice(i, i + 250));
        published += Math.min(250, total - i);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await expect.poll(() => t.stored(), { timeout: 30_000, interval: 20 }).toBeGreaterThan(500);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const atKill = await t.stored();
    // Events keep flowing while the audit service is dead: JetStream holds them.
    await publishing;
    expect(published).toBe(total);
    expect(await t.stored()).toBe(atKill);
    child = spawnAudit(vars);
    await t.waitStored(total, 60_000);
    // Every event acked (the killed process's unacked ones redelivered and stored again, idempotently):
    // JetStream has nothing left to redeliver, so a duplicate would be in the table now.
    await eventually(
      async () => {
        const consumer = await t.jsm.consumers.info(t.streamName, 'audit');
        expect({ pending: consumer.num_pending, unacked: consumer.num_ack_pending }).toEqual({ pending: 0, unacked: 0 });
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(await t.stored()).toBe(total);
    expect(await duplicates(t)).toBe(0);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }, 120_000);

  it('resumes by itself after its NATS server restarts', async () => {
    const port = await freePort();
    const store = mkdtempSync(path.join(tmpdir(), 'audit-nats-'));
    const startNats = () => {
      const nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
      children.push(nats);
      return nats;
    };
    let nats = startNats();
    try {
      await waitForPort(port);
      const t = (env = await startTestEnv({ natsUrl: `nats://127.0.0.1:${port}` }));
      const audit = await t.startAudit();
      await t.publish(burst(100, 'nats-org'));
      await t.waitStored(100);
      nats.kill('SIGTERM');
      await new Promise((r) => nats.once('exit', r));
      nats = startNats();
      await waitForPort(port);
      // The publisher retries until its own connection and JetStream are back; the consumer needs no help.
      const more = burst(100, 'nats-org');
      await expect
        .poll(
          () =>
            t.publish(more).then(
              () => true,
              () => false,
            ),
          { timeout: 20_000, interval: 250 },
        )
        .toBe(true);
      await t.waitStored(200, 30_000);
      expect(await duplicates(t)).toBe(0);
      await expect.poll(() => audit.consumer.isConnected(), { timeout: 10_000 }).toBe(true);
    } finally {
      await env?.close();
      env = undefined;
      nats.kill('SIGTERM');
      rmSync(store, { recursive: true, force: true });
    }
  }, 90_000);
});

/** Waits until something accepts connections on `port` of 127.0.0.1. */
async function waitForPort(port: number): Promise<void> {
  await eventually(
    async () => {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (!ok) throw new Error(`nothing listens on ${port}`);
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
}
