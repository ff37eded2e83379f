import { serversSetup } from '@arbiter/test-kit';
import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'execution', globalSetup: [serversSetup], include: ['test/**/*.test.ts'] } });
