import { runService } from '@arbiter/service-kit';
import { AuditConfig } from './config.js';
import { startAudit } from './service.js';

await runService({
  name: 'audit',
  config: AuditConfig,
  packageJson: new URL('../package.json', import.meta.url),
  start: startAudit,
});
