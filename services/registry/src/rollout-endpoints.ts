import { ArbiterError, RolloutRequest, RolloutSubject, type RolloutState } from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef } from '@arbiter/service-kit';
import type { RolloutsService } from './rollouts-service.js';

/** The `registry.{policy,flow}.rollout` endpoints (docs/design/canary.md), served with the rest of the registry. */
export function rolloutEndpoints(rollouts: { policy: RolloutsService; flow: RolloutsService }): Record<string, EndpointDef> {
  const endpoint = (service: RolloutsService, subject: string) =>
    defineEndpoint({
      subject,
      request: RolloutRequest,
      handler: async ({ principal, baseId, action, percent, rolloutId }): Promise<RolloutState> => {
        switch (action) {
          case 'get':
            return service.get(principal, baseId);
          case 'percent':
            if (percent === undefined) throw new ArbiterError('bad_request', '`percent` is needed to change a rollout');
            return service.setPercent(principal, baseId, percent);
          case 'promote':
            return service.promote(principal, baseId);
          case 'rollback':
            return service.rollback(principal, baseId);
          case 'guard':
            return service.guard(principal, baseId, rolloutId);
        }
      },
    });
  return {
    policy_rollout: endpoint(rollouts.policy, RolloutSubject.policy),
    flow_rollout: endpoint(rollouts.flow, RolloutSubject.flow),
  };
}
