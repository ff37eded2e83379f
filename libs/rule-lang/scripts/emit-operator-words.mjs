#!/usr/bin/env node
// Writes dist/operator-words.{js,d.ts} (the `@arbiter/rule-lang/operator-words` entry) from the
// built catalogue: plain data, no imports. Runs after `tsc` in `npm run build`.
import { writeFileSync } from 'node:fs';
import { operatorWordsModule } from '../dist/operators/words-module.js';

const { js, dts } = operatorWordsModule();
writeFileSync(new URL('../dist/operator-words.js', import.meta.url), js);
writeFileSync(new URL('../dist/operator-words.d.ts', import.meta.url), dts);
