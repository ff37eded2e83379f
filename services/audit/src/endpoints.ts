import {
  AuditQueryRequest,
  AuditSubject,
  DecisionDropsReport,
  DecisionGetRequest,
  DecisionHistoryRequest,
  DecisionQueryRequest,
  DecisionSettingsGetRequest,
  DecisionSettingsPutRequest,
  DecisionSettingsDeleteRequest,
  DecisionSettingsResolveRequest,
  DecisionStatsRequest,
  DecisionSubject,
} from '@arbiter/contracts';
import { defineEndpoint, type Db, type ServiceDef } from '@arbiter/service-kit';
import {
  baseStats,
  decisionHistory,
  deleteBaseSettings,
  getSettings,
  listDecisions,
  putSettings,
  readDecision,
  reportDrops,
  resolveSettings,
} from './decisions-service.js';
import { queryAudit } from './query-service.js';

/** The `audit.*` subjects (the trail and `audit.decisions.*`), served in the `audit` queue group. */
export function auditService(db: Db, version: string): ServiceDef {
  return {
    name: 'audit',
    version,
    description: 'Arbiter audit trail and decision records: queries of the stored events and decisions',
    endpoints: {
      query: defineEndpoint({ subject: AuditSubject.query, request: AuditQueryRequest, handler: (req) => queryAudit(db, req) }),
      decisions_query: defineEndpoint({
        subject: DecisionSubject.query,
        request: DecisionQueryRequest,
        handler: (req) => listDecisions(db, req),
      }),
      decisions_get: defineEndpoint({ subject: DecisionSubject.get, request: DecisionGetRequest, handler: (req) => readDecision(db, req) }),
      decisions_history: defineEndpoint({
        subject: DecisionSubject.history,
        request: DecisionHistoryRequest,
        handler: (req) => decisionHistory(db, req),
      }),
      decisions_settings_get: defineEndpoint({
        subject: DecisionSubject.settingsGet,
        request: DecisionSettingsGetRequest,
        handler: (req) => getSettings(db, req.principal),
      }),
      decisions_settings_put: defineEndpoint({
        subject: DecisionSubject.settingsPut,
        request: DecisionSettingsPutRequest,
        handler: (req) => putSettings(db, req),
      }),
      decisions_settings_delete: defineEndpoint({
        subject: DecisionSubject.settingsDelete,
        request: DecisionSettingsDeleteRequest,
        handler: (req) => deleteBaseSettings(db, req),
      }),
      decisions_settings_resolve: defineEndpoint({
        subject: DecisionSubject.settingsResolve,
        request: DecisionSettingsResolveRequest,
        handler: (req) => resolveSettings(db, req.orgId),
      }),
      decisions_stats: defineEndpoint({
        subject: DecisionSubject.stats,
        request: DecisionStatsRequest,
        handler: (req) => baseStats(db, req.principal, req.baseId),
      }),
      decisions_drops_report: defineEndpoint({
        subject: DecisionSubject.dropsReport,
        request: DecisionDropsReport,
        handler: (req) => reportDrops(db, req),
      }),
    },
  };
}
