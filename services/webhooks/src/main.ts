import { runService } from '@arbiter/service-kit';
import { WebhooksConfig } from './config.js';
import { startWebhooks } from './service.js';

await runService({
  name: 'webhooks',
  config: WebhooksConfig,
  packageJson: new URL('../package.json', import.meta.url),
  start: startWebhooks,
});
