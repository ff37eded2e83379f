import type { z } from 'zod';
import { connectBus, type Bus } from './bus.js';
import type { NatsConfig } from './config.js';
import { natsSecurityOf } from './nats.js';
import type { ServiceKit } from './run-service.js';

/**
 * The service's bus, as every service connects it: address, subject prefix, credentials and TLS
 * from its configuration (`NatsConfig`); client name, logger and bus metrics from its kit.
 */
export function connectServiceBus(kit: ServiceKit<z.infer<typeof NatsConfig>>): Promise<Bus> {
  const { config } = kit;
  return connectBus({
    url: config.NATS_URL,
    prefix: config.NATS_SUBJECT_PREFIX,
    name: kit.name,
    logger: kit.logger,
    security: natsSecurityOf(config),
    metrics: kit.metrics,
  });
}
