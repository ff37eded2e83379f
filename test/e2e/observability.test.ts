/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/observability query only metrics
 * the running services expose (metrics on every service, a dashboard and alert rules).
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type ServiceName, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'deploy/observability');
const BACK_ENDS: ServiceName[] = ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp'];

interface Rule {
  alert: string;
  expr: string;
  labels?: { severity?: string };
}
const rules = (parse(readFileSync(path.join(dir, 'alerts.yaml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const dashboard = JSON.parse(readFileSync(path.join(dir, 'grafana-dashboard.json'), 'utf8')) as {
  panels: { id: number; targets: { expr: string }[] }[];
};
const queries = [...rules.map((r) => r.expr), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];

/** Metric names a PromQL expression reads (histogram series named by their base metric). */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:arbiter|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, ''));
}

let stack: Stack;
const exposed = new Set<string>();

beforeAll(async () => {
  stack = await startStack({ services: [...BACK_ENDS, 'gateway'] });
  // One request of each kind, so labelled series exist too.
  await call(stack, 'POST', '/run', {
    key: stack.adminKey,
    body: { rule: 'A **x** is ok if the __n__ of the **x** is 1.', data: { x: { n: 1 } } },
  });
  const pages = [...BACK_ENDS, 'gateway' as const].map((s) => fetch(`${stack.opsUrl(s)}/metrics`));
  for (const res of await Promise.all(pages)) {
    for (const m of (await res.text()).matchAll(/^# TYPE (\S+) /gm)) exposed.add(m[1]);
  }
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('deploy/observability', () => {
  it('has well-formed alert rules, each with a severity', () => {
    expect(rules.length).toBeGreaterThanOrEqual(6);
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^Arbiter[A-Za-z]+$/);
      expect(['page', 'ticket']).toContain(r.labels?.severity);
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('has a dashboard with unique panel ids, every panel with a query', () => {
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of dashboard.panels) expect(p.targets.length).toBeGreaterThan(0);
  });

  it('queries only metrics that the running services expose', () => {
    const wanted = [...new Set(queries.flatMap(metricsIn))].sort();
    expect(wanted).toContain('arbiter_bus_requests_total');
    expect(wanted.filter((name) => !exposed.has(name))).toEqual([]);
  });
});
