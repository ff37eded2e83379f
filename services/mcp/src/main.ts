import { runService } from '@arbiter/service-kit';
import { McpConfig } from './config.js';
import { startMcp } from './service.js';

await runService({ name: 'mcp', config: McpConfig, packageJson: new URL('../package.json', import.meta.url), start: startMcp });
