import type { Command } from 'commander';
import { z } from 'zod';
import { RunMigrationResultSchema, type RunMigrationResult } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { CliError, ExitCode } from '../errors';

const DeploymentMigrationSchema = z.object({ deploymentId: z.string(), results: z.array(RunMigrationResultSchema) });

type Pin = RunMigrationResult['from'];

/** People compare digests by their first characters; --json carries them whole. */
function short(digest: string): string {
  return digest.slice(0, 12);
}

function pinLine(label: string, pin: Pin): string {
  return `${label} version ${pin.version}  digest ${short(pin.digest)}  effective ${short(pin.effectiveDigest)}`;
}

const OUTCOME_LINES: Record<RunMigrationResult['outcome'], string> = {
  migrated: 'migrated',
  would_migrate: 'would migrate (dry run: nothing moved)',
  refused: 'refused',
};

/** Printed, then the exit code says it: a script branches on 1, a person reads the divergence. */
class MigrationRefusedError extends CliError {
  constructor(runId: string) {
    super(`run ${runId} was not migrated`, ExitCode.failure);
  }
}

/** The result of one run's migration, a line each: outcome, pins, decisions compared, then why it was refused. */
function resultLines(result: RunMigrationResult): string[] {
  const lines = [
    `run ${result.runId}: ${OUTCOME_LINES[result.outcome]}`,
    pinLine('from:', result.from),
    pinLine('to:  ', result.to),
    `decisions compared: ${result.decisionsCompared}`,
  ];
  const divergence = result.divergence;
  if (divergence) {
    const position = divergence.globalPosition === null ? '' : `, position ${divergence.globalPosition}`;
    lines.push(`first divergence at event ${divergence.streamVersion} (${divergence.eventType}${position}):`, `  recorded: ${divergence.recorded}`, `  proposed: ${divergence.proposed}`);
  }
  if (result.refusal) lines.push(`refusal: ${result.refusal}`);
  return lines;
}

/**
 * `packetagent run migrate RUN --version N [--dry-run]`: the supervisor replays the waiting run's
 * history under both versions; the run moves only if every decision is the same. Exit 1 when it
 * was refused.
 */
export async function migrateRun(context: CommandContext, runId: string, options: { version: number; dryRun?: boolean }): Promise<void> {
  const { client } = context;
  const result = await client.post(client.workspacePath('runs', runId, 'migrate'), { json: { version: options.version, dryRun: options.dryRun === true } }, RunMigrationResultSchema);
  context.report(resultLines(result), result);
  if (result.outcome === 'refused') throw new MigrationRefusedError(result.runId);
}

/** One line per run: what a person scans a deployment's comparison for. */
function runLine(result: RunMigrationResult): string {
  const fields = [result.runId, result.outcome, `v${result.from.version} -> v${result.to.version}`, `${result.decisionsCompared} decisions compared`];
  const divergence = result.divergence;
  if (divergence) fields.push(`diverged at event ${divergence.streamVersion} (${divergence.eventType}): recorded ${divergence.recorded}, proposed ${divergence.proposed}`);
  if (result.refusal) fields.push(result.refusal);
  return fields.join('  ');
}

/**
 * `packetagent deployment migrate-runs DEPLOYMENT --version N [--apply]`: every waiting run of the
 * deployment compared on its own, a line each; nothing moves without --apply.
 */
export async function migrateDeploymentRuns(context: CommandContext, deploymentId: string, options: { version: number; apply?: boolean }): Promise<void> {
  const { client } = context;
  const dryRun = options.apply !== true;
  const answer = await client.post(client.workspacePath('deployments', deploymentId, 'migrate-runs'), { json: { version: options.version, dryRun } }, DeploymentMigrationSchema);
  const count = (outcome: RunMigrationResult['outcome']) => answer.results.filter((result) => result.outcome === outcome).length;
  const summary = dryRun
    ? `deployment ${answer.deploymentId}: dry run, nothing moved: ${count('would_migrate')} would migrate, ${count('refused')} refused`
    : `deployment ${answer.deploymentId}: ${count('migrated')} migrated, ${count('refused')} refused`;
  context.report(answer.results.length ? [summary, ...answer.results.map(runLine)] : [`deployment ${answer.deploymentId}: no waiting runs`], answer);
}

/** `run migrate` and `deployment migrate-runs`: both need the deployment-control permission (admin and owner). */
export function registerMigrationCommands(
  groups: { run: Command; deployment: Command },
  deps: { context(command: Command): CommandContext; positiveInteger(value: string): number },
): void {
  groups.run
    .command('migrate')
    .description(
      "Move a waiting run to its deployment's current version: its history is replayed under both versions and it moves only if every decision is the same; prints the first divergence and exits 1 when refused.",
    )
    .argument('<run>', 'run id')
    .requiredOption('--version <n>', 'the version the deployment pins now', deps.positiveInteger)
    .option('--dry-run', 'compare only; the run stays where it is')
    .action((runId: string, options: { version: number; dryRun?: boolean }, command: Command) => migrateRun(deps.context(command), runId, options));
  groups.deployment
    .command('migrate-runs')
    .description("Compare every waiting run of a deployment with its current version, one line per run; with --apply, move each run whose decisions are all the same.")
    .argument('<deployment>', 'deployment id')
    .requiredOption('--version <n>', 'the version the deployment pins now', deps.positiveInteger)
    .option('--apply', 'move the runs (without it, nothing moves)')
    .action((deploymentId: string, options: { version: number; apply?: boolean }, command: Command) => migrateDeploymentRuns(deps.context(command), deploymentId, options));
}
