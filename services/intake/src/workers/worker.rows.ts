import type { z } from 'zod';
import type { VersionSchema, WorkerSummarySchema } from '@packetagent/contracts';

export interface WorkerRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  latest_version: number;
  created_at: Date;
}

export interface VersionRow {
  worker_id: string;
  version: number;
  digest: string;
  definition: unknown;
  source_text: string | null;
  source_format: 'json' | 'yaml' | null;
  created_at: Date;
}

export function workerView(row: WorkerRow): z.input<typeof WorkerSummarySchema> {
  return { id: row.id, name: row.name, description: row.description, latestVersion: row.latest_version, createdAt: row.created_at.toISOString() };
}

export function versionView(row: VersionRow): z.input<typeof VersionSchema> {
  return {
    workerId: row.worker_id,
    version: row.version,
    digest: row.digest.trim(),
    definition: row.definition as z.input<typeof VersionSchema>['definition'],
    source: row.source_text !== null && row.source_format !== null ? { format: row.source_format, text: row.source_text } : null,
    createdAt: row.created_at.toISOString(),
  };
}
