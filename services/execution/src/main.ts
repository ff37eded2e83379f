import { runService } from '@arbiter/service-kit';
import { ExecConfig } from './config.js';
import { startExecution } from './service.js';

await runService({
  name: 'execution',
  config: ExecConfig,
  packageJson: new URL('../package.json', import.meta.url),
  start: startExecution,
});
