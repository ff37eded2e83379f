import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'key-auth', include: ['test/**/*.test.ts'] } });
