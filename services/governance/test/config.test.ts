import { loadConfig } from '@arbiter/service-kit';
import { describe, expect, it } from 'vitest';
import { GovernanceConfig, governanceDatabaseUrl } from '../src/config.js';

describe('the governance database', () => {
  it('follows DATABASE_URL, so stacks with different databases keep separate ones', () => {
    expect(governanceDatabaseUrl(loadConfig(GovernanceConfig, {}))).toBe('postgres://postgres@127.0.0.1:5432/policy_service_governance');
    const a = loadConfig(GovernanceConfig, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_a' });
    const b = loadConfig(GovernanceConfig, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_b' });
    expect(governanceDatabaseUrl(a)).toBe('postgres://postgres@127.0.0.1:5432/stack_a_governance');
    expect(governanceDatabaseUrl(b)).toBe('postgres://postgres@127.0.0.1:5432/stack_b_governance');
  });

  it('is GOVERNANCE_DATABASE_URL when set', () => {
    const config = loadConfig(GovernanceConfig, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stack_a',
      GOVERNANCE_DATABASE_URL: 'postgres://postgres@db.internal:5432/elsewhere',
    });
    expect(governanceDatabaseUrl(config)).toBe('postgres://postgres@db.internal:5432/elsewhere');
  });
});
