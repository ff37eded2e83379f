import { runService } from '@arbiter/service-kit';
import { GatewayConfig } from './config.js';
import { startGateway } from './service.js';

await runService({ name: 'gateway', config: GatewayConfig, packageJson: new URL('../package.json', import.meta.url), start: startGateway });
