import { describeMigration, migrationTarget, type RunMigrationResult } from './run-migration';

const result = (overrides: Partial<RunMigrationResult>): RunMigrationResult => ({
  runId: 'run1',
  outcome: 'would_migrate',
  from: { version: 2, digest: 'a'.repeat(64), effectiveDigest: 'b'.repeat(64) },
  to: { version: 3, digest: 'c'.repeat(64), effectiveDigest: 'd'.repeat(64) },
  decisionsCompared: 4,
  divergence: null,
  refusal: null,
  ...overrides,
});

describe(migrationTarget.name, () => {
  it('offers the deployment version only when it is newer than the run', () => {
    expect(migrationTarget(2, 3)).toBe(3);
    expect(migrationTarget(3, 3)).toBeNull();
    expect(migrationTarget(3, 2)).toBeNull();
    expect(migrationTarget(2, null)).toBeNull();
  });
});

describe(describeMigration.name, () => {
  it('reads a dry run that found every decision the same as one that can go ahead', () => {
    expect(describeMigration(result({}))).toEqual({ tone: 'ok', title: 'Can migrate (version 2 → 3): 4 decisions compared, all the same', detail: [] });
  });

  it('reads a move as done', () => {
    expect(describeMigration(result({ outcome: 'migrated', decisionsCompared: 1 })).title).toBe('Migrated (version 2 → 3): 1 decision compared, all the same');
  });

  it('shows where a refused comparison first decided differently, recorded against proposed', () => {
    const sut = describeMigration(
      result({
        outcome: 'refused',
        decisionsCompared: 2,
        divergence: { streamVersion: 7, globalPosition: 412, eventType: 'run.tool_decided', recorded: 'allow http_fetch GET', proposed: 'approval_required http_fetch GET' },
      }),
    );
    expect(sut).toEqual({
      tone: 'bad',
      title: 'Cannot migrate (version 2 → 3): 2 decisions compared before a different decision',
      detail: ['First divergence at event 7 (run.tool_decided):', 'recorded: allow http_fetch GET', 'proposed: approval_required http_fetch GET'],
    });
  });

  it('gives the reason of a refusal that compared nothing', () => {
    expect(describeMigration(result({ outcome: 'refused', decisionsCompared: 0, refusal: 'already on version 3' }))).toMatchObject({ tone: 'bad', detail: ['already on version 3'] });
  });
});
