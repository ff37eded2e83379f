import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, statusOf } from '../src/errors.js';

const doc = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/errors.md'), 'utf8');
const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => ({ code: m[1], status: Number(m[2]) }));

describe('docs/errors.md', () => {
  it('documents every error code with its status, and nothing else', () => {
    expect(rows.map((r) => r.code).sort()).toEqual([...ErrorCode.options].sort());
    for (const row of rows) expect(row.status, row.code).toBe(statusOf(row.code as ErrorCode));
  });
});
