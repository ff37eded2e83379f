import { AuditQueryRequest, AuditSubject } from '@arbiter/contracts';
import { defineEndpoint, type Db, type ServiceDef } from '@arbiter/service-kit';
import { queryAudit } from './query-service.js';

/** The `audit.*` subjects, served in the `audit` queue group. */
export function auditService(db: Db, version: string): ServiceDef {
  return {
    name: 'audit',
    version,
    description: 'Arbiter audit trail: queries of the stored events',
    endpoints: {
      query: defineEndpoint({ subject: AuditSubject.query, request: AuditQueryRequest, handler: (req) => queryAudit(db, req) }),
    },
  };
}
