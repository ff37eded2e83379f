import { runService } from '@arbiter/service-kit';
import { GovernanceConfig } from './config.js';
import { startGovernance } from './service.js';

await runService({
  name: 'governance',
  config: GovernanceConfig,
  packageJson: new URL('../package.json', import.meta.url),
  start: startGovernance,
});
