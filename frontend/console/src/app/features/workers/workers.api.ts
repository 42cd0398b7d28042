/** Shapes of the control-plane answers the workers pages read. */
export interface WorkerSummary {
  id: string;
  name: string;
  description: string;
  latestVersion: number;
  createdAt: string;
}

export interface VersionSummary {
  workerId: string;
  version: number;
  digest: string;
  createdAt: string;
}

export interface Version extends VersionSummary {
  definition: unknown;
  /** The document as it was written (comments and key order kept); null for versions made before sources were kept. */
  source?: { format: 'json' | 'yaml'; text: string } | null;
}

export interface Deployment {
  id: string;
  workerId: string;
  workerName: string;
  version: number;
  digest: string;
  effectiveDigest: string;
  overrides: unknown;
  status: 'active' | 'paused' | 'revoked';
  statusReason: string | null;
  activeRuns: number;
  heldRuns: number;
  createdAt: string;
  webhooks?: Array<{ triggerId: string; secret: string }>;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
