import { commandArguments, normaliseResource, type ActorRef, type ExecLimits } from '@packetagent/contracts';
import { ExecRefusedError } from '../../sandbox.errors';
import type { ExecBodyInput } from '../../sandbox.dto';

/**
 * An operator's command, checked when built: `command` is read exactly as run_command reads it
 * (no shell metacharacters; words split on spaces, quotes keep spaces, nothing expanded); `argv`
 * is taken as given.
 * The sandbox checks the rest (program, cwd, environment, limits) before anything runs.
 */
export class StartExecCommand {
  readonly argv: string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly limits: Partial<ExecLimits>;
  readonly runId: string | null;
  readonly wait: boolean;

  constructor(
    readonly workspaceId: string,
    readonly requestedBy: ActorRef,
    body: ExecBodyInput,
  ) {
    this.argv = body.argv ?? splitCommand(body.command ?? '');
    this.cwd = body.cwd ?? '.';
    this.env = body.env ?? {};
    this.limits = body.limits ?? {};
    this.runId = body.runId ?? null;
    this.wait = body.wait;
  }
}

/** The arguments of a command line, as run_command reads one; a refusal names what is wrong. */
export function splitCommand(command: string): string[] {
  const checked = normaliseResource('run_command', command);
  if (!checked.ok) throw new ExecRefusedError('the command was refused; nothing ran', [{ path: 'command', message: checked.message }]);
  const split = commandArguments(command);
  if (!split.ok) throw new ExecRefusedError('the command was refused; nothing ran', [{ path: 'command', message: split.message }]);
  return split.argv;
}
