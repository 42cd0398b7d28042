/** POST /runs/{id}/migrate {version, dryRun}, answered by the supervisor. */
export interface RunMigrationResult {
  runId: string;
  outcome: 'migrated' | 'would_migrate' | 'refused';
  from: MigrationPin;
  to: MigrationPin;
  decisionsCompared: number;
  divergence: { streamVersion: number; globalPosition: number | null; eventType: string; recorded: string; proposed: string } | null;
  refusal: string | null;
}

export interface MigrationPin {
  version: number;
  digest: string;
  effectiveDigest: string;
}

/** The version a waiting run could move to: the deployment's, when it is newer than the run's. */
export function migrationTarget(runVersion: number, deploymentVersion: number | null | undefined): number | null {
  return typeof deploymentVersion === 'number' && deploymentVersion > runVersion ? deploymentVersion : null;
}

/** What a person reads of a comparison or a move: a headline, and the first divergence when there is one. */
export function describeMigration(result: RunMigrationResult): { tone: 'ok' | 'bad'; title: string; detail: string[] } {
  const versions = `version ${result.from.version} → ${result.to.version}`;
  const compared = `${result.decisionsCompared} ${result.decisionsCompared === 1 ? 'decision' : 'decisions'} compared`;
  switch (result.outcome) {
    case 'would_migrate':
      return { tone: 'ok', title: `Can migrate (${versions}): ${compared}, all the same`, detail: [] };
    case 'migrated':
      return { tone: 'ok', title: `Migrated (${versions}): ${compared}, all the same`, detail: [] };
    case 'refused': {
      const d = result.divergence;
      const detail = d
        ? [`First divergence at event ${d.streamVersion} (${d.eventType}):`, `recorded: ${d.recorded}`, `proposed: ${d.proposed}`]
        : [];
      if (result.refusal) detail.push(result.refusal);
      return { tone: 'bad', title: `Cannot migrate (${versions}): ${compared}${d ? ' before a different decision' : ''}`, detail };
    }
  }
}
