/**
 * A service's connection to a NATS cluster (its own three `nats-server` processes with JetStream;
 * the shared server is never touched): `NATS_URL` as a list of the cluster's servers, failover to
 * another node when the connected one is killed, and the events stream at `EVENTS_STREAM_REPLICAS`.
 */
import { eventStreamName, isArbiterError } from '@arbiter/contracts';
import { eventually, freePort, startNatsCluster, type NatsCluster } from '@arbiter/test-kit';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectBus, defineEndpoint, type Bus } from '../src/bus.js';
import { ensureEventStream } from '../src/events/stream.js';
import { connectNats } from '../src/nats.js';
import { memoryLogger, randomPrefix } from './helpers.js';

const { logger } = memoryLogger('nats-cluster-test');
let cluster: NatsCluster;
const open: Array<NatsConnection | Bus> = [];

beforeAll(async () => {
  cluster = await startNatsCluster(3, { name: 'service-kit' });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(open.map((c) => ('nc' in c ? c.nc.close() : c.close())));
  await cluster?.stop();
});

/** The node a connection is on, by the server name it announced. */
const nodeOf = (nc: NatsConnection) => cluster.nodes.find((n) => n.name === nc.info?.server_name);

describe('NATS_URL as a list of cluster servers', () => {
  it('connects through a reachable server of the list whichever place it has, and names every address when none is', async () => {
    // nats.js reads a comma-joined string as one address (the last one): each must be given on its own.
    const dead = `nats://127.0.0.1:${await freePort()}`;
    for (const list of [`${cluster.nodes[1].url},${dead}`, `${dead},${cluster.nodes[1].url}`]) {
      const nc = await connectNats(list, 'list-test');
      open.push(nc);
      expect(nc.info?.server_name, list).toBe(cluster.nodes[1].name);
    }

    const alsoDead = `nats://127.0.0.1:${await freePort()}`;
    const failure = await connectNats(`${dead},${alsoDead}`, 'list-test').catch((err: unknown) => err);
    expect(isArbiterError(failure) && failure.code).toBe('dependency_unavailable');
    expect((failure as Error).message).toContain(`${dead},${alsoDead}`);
  });

  it('moves to another node when the one it is connected to is killed, and requests work again', async () => {
    const prefix = randomPrefix();
    const server = await connectBus({ url: cluster.urls, prefix, name: 'cluster-server', logger });
    const client = await connectBus({ url: cluster.urls, prefix, name: 'cluster-client', logger });
    open.push(server, client);
    await server.serve({
      name: 'cluster',
      version: '1.0.0',
      endpoints: { ping: defineEndpoint({ subject: 'cluster.ping', request: z.object({}), handler: async () => ({ pong: true }) }) },
    });
    const Reply = z.object({ pong: z.boolean() });
    // The service's subscription reaches the client's node over the cluster's routes a moment later.
    expect(await eventually(() => client.request('cluster.ping', {}, Reply, { timeoutMs: 1000 }), 20_000)).toEqual({ pong: true });

    const victim = nodeOf(client.nc)!;
    expect(victim).toBeDefined();
    await victim.kill();
    try {
      const reply = await eventually(() => client.request('cluster.ping', {}, Reply, { timeoutMs: 1000 }), 20_000);
      expect(reply).toEqual({ pong: true });
      expect(client.nc.info?.server_name).not.toBe(victim.name);
    } finally {
      await victim.start();
      await cluster.healthy();
    }
  }, 60_000);
});

describe('a node that stops answering without closing its connections', () => {
  it('is left for another node within a few ping intervals (NATS_PING_INTERVAL_MS), and requests work again', async () => {
    const prefix = randomPrefix();
    const client = await connectBus({ url: cluster.urls, prefix, name: 'frozen-client', logger, tuning: { pingIntervalMs: 300 } });
    open.push(client);
    const victim = nodeOf(client.nc)!;
    // The service sits on another node, so no request can be routed to the frozen one.
    const elsewhere = cluster.nodes.find((n) => n !== victim)!;
    const server = await connectBus({ url: elsewhere.url, prefix, name: 'frozen-server', logger });
    open.push(server);
    await server.serve({
      name: 'frozen',
      version: '1.0.0',
      endpoints: { ping: defineEndpoint({ subject: 'frozen.ping', request: z.object({}), handler: async () => ({ pong: true }) }) },
    });
    const Reply = z.object({ pong: z.boolean() });
    // The service's subscription reaches the client's node over the cluster's routes a moment later.
    expect(await eventually(() => client.request('frozen.ping', {}, Reply))).toEqual({ pong: true });

    victim.freeze();
    try {
      // nats.js's defaults (pings every 2 minutes; 20 s to give up a connection attempt, and the first
      // reconnect goes back to the frozen node) would keep the client away far past this deadline.
      // A request may still be answered in the moment before the stop takes hold: what counts is an
      // answer received through another node.
      const reply = await eventually(async () => {
        const answer = await client.request('frozen.ping', {}, Reply, { timeoutMs: 1000 });
        expect(client.nc.info?.server_name).not.toBe(victim.name);
        return answer;
      }, 15_000);
      expect(reply).toEqual({ pong: true });
    } finally {
      victim.thaw();
      await cluster.healthy();
    }
  }, 60_000);
});

describe('the events stream in a JetStream cluster', () => {
  it('is created with EVENTS_STREAM_REPLICAS copies, and an existing one-copy stream is brought to that count', async () => {
    const nc = await connectNats(cluster.urls, 'stream-test');
    open.push(nc);
    const jsm = await jetstreamManager(nc);

    const fresh = randomPrefix();
    await ensureEventStream(nc, fresh, { replicas: 3 });
    const created = await jsm.streams.info(eventStreamName(fresh));
    expect(created.config.num_replicas).toBe(3);
    expect(created.cluster?.replicas).toHaveLength(2);

    const old = randomPrefix();
    await ensureEventStream(nc, old);
    expect((await jsm.streams.info(eventStreamName(old))).config.num_replicas).toBe(1);
    await ensureEventStream(nc, old, { replicas: 3 });
    const updated = await jsm.streams.info(eventStreamName(old));
    expect(updated.config.num_replicas).toBe(3);
    await eventually(async () => expect((await jsm.streams.info(eventStreamName(old))).cluster?.replicas).toHaveLength(2));
  }, 30_000);
});
