import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'run', include: ['test/**/*.test.ts'] } });
