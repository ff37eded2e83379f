import {
  RunnableRevisionRequest,
  RunnableSnapshotRequest,
  RunnableSubject,
  RunReportRequest,
  type RunnableRevision,
  type RunnableSnapshotPage,
  type RunReportReply,
} from '@arbiter/contracts';
import { defineEndpoint, type EndpointDef } from '@arbiter/service-kit';
import type { RunnableSyncService } from './runnable-sync-service.js';

/** The `registry.runnable.*` endpoints of local evaluation, served with the rest of the registry. */
export function runnableEndpoints(sync: RunnableSyncService): Record<string, EndpointDef> {
  return {
    runnable_snapshot: defineEndpoint({
      subject: RunnableSubject.snapshot,
      request: RunnableSnapshotRequest,
      handler: async (req): Promise<RunnableSnapshotPage> => sync.snapshotPage(req),
    }),
    runnable_revision: defineEndpoint({
      subject: RunnableSubject.revision,
      request: RunnableRevisionRequest,
      handler: async ({ principal }): Promise<RunnableRevision> => ({ revision: await sync.revision(principal) }),
    }),
    runnable_report: defineEndpoint({
      subject: RunnableSubject.report,
      request: RunReportRequest,
      handler: async (req): Promise<RunReportReply> => sync.report(req),
    }),
  };
}
