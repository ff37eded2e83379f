import { loadConfig } from '@arbiter/service-kit';
import { describe, expect, it } from 'vitest';
import { AuditConfig, auditDatabaseUrl } from '../src/config.js';

describe('the audit database', () => {
  it('follows DATABASE_URL, so stacks with different databases keep separate ones', () => {
    expect(auditDatabaseUrl(loadConfig(AuditConfig, {}))).toBe('postgres://postgres@127.0.0.1:5432/policy_service_audit');
    const a = loadConfig(AuditConfig, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_a' });
    const b = loadConfig(AuditConfig, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_b' });
    expect(auditDatabaseUrl(a)).toBe('postgres://postgres@127.0.0.1:5432/stack_a_audit');
    expect(auditDatabaseUrl(b)).toBe('postgres://postgres@127.0.0.1:5432/stack_b_audit');
  });

  it('is AUDIT_DATABASE_URL when set', () => {
    const config = loadConfig(AuditConfig, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_a',
      AUDIT_DATABASE_URL: 'postgres://postgres@db.internal:5432/elsewhere',
    });
    expect(auditDatabaseUrl(config)).toBe('postgres://postgres@db.internal:5432/elsewhere');
  });
});
