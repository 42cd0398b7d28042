import type { Command } from 'commander';
import { z } from 'zod';
import type { CommandContext } from '../context';

const SupervisionSchema = z.looseObject({
  runId: z.string(),
  status: z.string(),
  quarantineReason: z.string().nullable(),
});
const ReleasedSchema = SupervisionSchema.extend({ outcome: z.enum(['resumed', 'quarantined', 'pending']) });
const EndedSchema = SupervisionSchema.extend({ endedAtVersion: z.number() });

const RELEASE_LINES: Record<z.infer<typeof ReleasedSchema>['outcome'], string> = {
  resumed: 'released: its history replayed and the run goes on',
  pending: 'released: no supervisor has taken it yet; the recovery sweep will',
  quarantined: 'still quarantined: its history still cannot be replayed',
};

/** `packetagent run release RUN`: clears the quarantine; the supervisor replays the run again, or quarantines it again with the reason. */
export async function releaseRun(context: CommandContext, runId: string): Promise<void> {
  const { client } = context;
  const released = await client.post(client.workspacePath('runs', runId, 'release'), { json: {} }, ReleasedSchema);
  const lines = [`run ${released.runId}`, RELEASE_LINES[released.outcome]];
  if (released.quarantineReason) lines.push(`reason: ${released.quarantineReason}`);
  context.report(lines, released);
}

/** `packetagent run end RUN --reason TEXT`: ends a quarantined run as abandoned without replaying it. */
export async function endRun(context: CommandContext, runId: string, options: { reason: string }): Promise<void> {
  const { client } = context;
  const ended = await client.post(client.workspacePath('runs', runId, 'end'), { json: { reason: options.reason } }, EndedSchema);
  context.report([`run ${ended.runId}`, `ended: abandoned (quarantined) at stream version ${ended.endedAtVersion}`], ended);
}

/** Release and end, under `run`: both need the run-recovery permission (admin and owner). */
export function registerQuarantineCommands(run: Command, deps: { context(command: Command): CommandContext }): void {
  run
    .command('release')
    .description('Release a quarantined run: the supervisor replays its history again; if it still cannot, the run stays quarantined with the reason.')
    .argument('<run>', 'run id')
    .action((runId: string, _options: unknown, command: Command) => releaseRun(deps.context(command), runId));
  run
    .command('end')
    .description('End a quarantined run as abandoned (cause quarantined) without replaying its history; recorded with your key.')
    .argument('<run>', 'run id')
    .requiredOption('--reason <text>', 'why; recorded with the end')
    .action((runId: string, options: { reason: string }, command: Command) => endRun(deps.context(command), runId, options));
}
