import { mkdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { execKey, type ParsedExecRequest } from '@packetagent/contracts';
import type { ResolvedSandboxOptions } from '../sandbox.options';
import { ExecRefusedError } from './prepare-exec';

/**
 * The host directory a command works in: the run's own workspace (the same one the files and git
 * tools use), or a scratch workspace of its own for an operator exec. The cwd is checked against
 * the real directory, so a symlink in the workspace cannot lead the command out of it.
 */
export async function workspaceFor(request: Pick<ParsedExecRequest, 'workspaceId' | 'runId' | 'execId'>, cwd: string, options: Pick<ResolvedSandboxOptions, 'runsDir' | 'operatorDir'>): Promise<string> {
  const dir = request.runId ? join(options.runsDir, request.runId, 'workspace') : join(options.operatorDir, request.workspaceId, execKey(request.execId));
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  let target: string;
  try {
    target = await realpath(join(root, cwd));
  } catch {
    throw new ExecRefusedError('the sandbox refused the command', [{ path: 'cwd', message: `${cwd} does not exist in the workspace` }]);
  }
  const inside = relative(root, target);
  if (inside === '..' || inside.startsWith(`..${sep}`)) throw new ExecRefusedError('the sandbox refused the command', [{ path: 'cwd', message: `${cwd} leads out of the workspace (through a symlink)` }]);
  if (!(await stat(target)).isDirectory()) throw new ExecRefusedError('the sandbox refused the command', [{ path: 'cwd', message: `${cwd} is not a directory` }]);
  return root;
}
