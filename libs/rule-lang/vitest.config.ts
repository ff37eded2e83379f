import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'rule-lang', include: ['test/**/*.test.ts'] } });
