import { runService } from '@arbiter/service-kit';
import { RegistryConfig } from './config.js';
import { startRegistry } from './service.js';

await runService({
  name: 'registry',
  config: RegistryConfig,
  packageJson: new URL('../package.json', import.meta.url),
  start: startRegistry,
});
