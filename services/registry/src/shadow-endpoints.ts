import { ShadowBaseRequest, ShadowSetRequest, ShadowSubject, type ShadowReport } from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef } from '@arbiter/service-kit';
import type { ShadowService } from './shadow-service.js';

/** The `registry.{kind}.shadow.*` endpoints (docs/design/shadow-runs.md), served with the rest of the registry. */
export function shadowEndpoints(shadows: ShadowService): Record<string, EndpointDef> {
  const endpoints: Record<string, EndpointDef> = {};
  for (const kind of ['policy', 'flow'] as const) {
    const subjects =
      kind === 'policy'
        ? { set: ShadowSubject.policySet, get: ShadowSubject.policyGet, stop: ShadowSubject.policyStop }
        : { set: ShadowSubject.flowSet, get: ShadowSubject.flowGet, stop: ShadowSubject.flowStop };
    endpoints[`${kind}_shadow_set`] = defineEndpoint({
      subject: subjects.set,
      request: ShadowSetRequest,
      handler: async ({ principal, baseId, ...body }): Promise<ShadowReport> => shadows.set(principal, kind, baseId, body),
    });
    endpoints[`${kind}_shadow_get`] = defineEndpoint({
      subject: subjects.get,
      request: ShadowBaseRequest,
      handler: async ({ principal, baseId }): Promise<ShadowReport> => shadows.get(principal, kind, baseId),
    });
    endpoints[`${kind}_shadow_stop`] = defineEndpoint({
      subject: subjects.stop,
      request: ShadowBaseRequest,
      handler: async ({ principal, baseId }): Promise<ShadowReport> => shadows.stop(principal, kind, baseId),
    });
  }
  return endpoints;
}
