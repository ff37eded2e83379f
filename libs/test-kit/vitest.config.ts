import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'test-kit', globalSetup: ['./src/global-setup.ts'], include: ['test/**/*.test.ts'] } });
