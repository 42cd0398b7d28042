import { normaliseResource, type ActorRef, type ExecLimits } from '@packetagent/contracts';
import { ExecRefusedError } from '../../sandbox.errors';
import type { ExecBodyInput } from '../../sandbox.dto';

/**
 * An operator's command, checked when built: `command` is split on spaces after the same
 * refusal as run_command's (no shell, so no shell metacharacters); `argv` is taken as given.
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

/**
 * Words split on spaces and tabs. Quotes are refused rather than passed on as characters of an
 * argument, which is never what someone who typed them meant: `argv` carries an argument with spaces.
 */
export function splitCommand(command: string): string[] {
  const checked = normaliseResource('run_command', command);
  if (!checked.ok) throw new ExecRefusedError('the command was refused; nothing ran', [{ path: 'command', message: checked.message }]);
  if (/["']/.test(checked.value)) throw new ExecRefusedError('the command was refused; nothing ran', [{ path: 'command', message: 'quotes are not read here: give argv for an argument with spaces' }]);
  return checked.value.split(' ');
}
