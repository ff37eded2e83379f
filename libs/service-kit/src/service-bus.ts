import type { z } from 'zod';
import { connectBus, type Bus } from './bus.js';
import type { NatsConfig } from './config.js';
import { natsSecurityOf, natsTuningOf } from './nats.js';
import type { ServiceKit } from './run-service.js';

/**
 * The service's bus, as every service connects it: addresses, subject prefix, credentials, TLS and
 * ping interval from its configuration (`NatsConfig`); client name, logger and bus metrics from its kit.
 */
export function connectServiceBus(kit: ServiceKit<z.infer<typeof NatsConfig>>): Promise<Bus> {
  const { config } = kit;
  return connectBus({
    url: config.NATS_URL,
    prefix: config.NATS_SUBJECT_PREFIX,
    name: kit.name,
    logger: kit.logger,
    security: natsSecurityOf(config),
    tuning: natsTuningOf(config),
    metrics: kit.metrics,
  });
}
