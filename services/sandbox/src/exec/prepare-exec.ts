import { posix } from 'node:path';
import { EXEC_ENV_NAME, SECRET_LIKE_ENV_NAME, ValidationError, type ExecLimits, type ParsedExecRequest, type ValidationIssue } from '@packetagent/contracts';
import { SANDBOX_PATH, SANDBOX_PATHS } from '../drivers/sandbox-driver';
import type { ResolvedSandboxOptions } from '../sandbox.options';

/** A program is a plain name found on the sandbox's PATH, never a path into the workspace or the host. */
const PROGRAM = /^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$/;

/** A request the sandbox will not run: each issue names the field and the rule. Nothing was started. */
export class ExecRefusedError extends ValidationError {
  override readonly code = 'exec_refused';
}

export interface CheckedExec {
  argv: string[];
  /** Normalised, relative to the workspace ('.' for itself). */
  cwd: string;
  env: Record<string, string>;
  limits: ExecLimits;
}

/** The cwd in normal form, or the reason it escapes the workspace. Symlinks are checked against the real directory when the exec starts. */
export function normaliseCwd(raw: string): { ok: true; cwd: string } | { ok: false; message: string } {
  if (raw.includes('\0')) return { ok: false, message: 'contains a NUL character' };
  if (raw.startsWith('/')) return { ok: false, message: 'must be relative to the workspace, not absolute' };
  const cwd = posix.normalize(raw === '' ? '.' : raw).replace(/\/+$/, '') || '.';
  if (cwd === '..' || cwd.startsWith('../')) return { ok: false, message: 'escapes the workspace' };
  return { ok: true, cwd };
}

/**
 * Checks a request against the service's rules before anything runs: the program, the cwd, the
 * environment (allowlisted names only, never one that looks like a secret) and the limits (each
 * at most its maximum). Throws ExecRefusedError with every issue found.
 */
export function checkExec(request: ParsedExecRequest, options: Pick<ResolvedSandboxOptions, 'defaults' | 'maximum' | 'envAllowlist' | 'egressOrigins'>): CheckedExec {
  const issues: ValidationIssue[] = [];
  const [program] = request.argv;
  if (!program || !PROGRAM.test(program)) issues.push({ path: 'argv[0]', message: 'the program must be a plain name found on the sandbox PATH (no path, no shell)' });
  request.argv.forEach((arg, index) => {
    if (arg.includes('\0')) issues.push({ path: `argv[${index}]`, message: 'contains a NUL character' });
  });

  // A computer's cwd is checked against its roots, there and by its real path (ComputerExecs).
  const cwd = request.computer ? (request.cwd.includes('\0') ? { ok: false as const, message: 'contains a NUL character' } : { ok: true as const, cwd: request.cwd }) : normaliseCwd(request.cwd);
  if (!cwd.ok) issues.push({ path: 'cwd', message: cwd.message });

  const allowlist = new Set(options.envAllowlist);
  for (const [name, value] of Object.entries(request.env)) {
    if (!EXEC_ENV_NAME.test(name)) issues.push({ path: `env.${name}`, message: 'not a plain environment name' });
    else if (SECRET_LIKE_ENV_NAME.test(name)) issues.push({ path: `env.${name}`, message: 'looks like a secret: give commands secrets through credentials, never the environment' });
    else if (!allowlist.has(name)) issues.push({ path: `env.${name}`, message: `not in the environment allowlist (${[...allowlist].join(', ')}); PACKETAGENT_SANDBOX_ENV_ALLOWLIST adds names` });
    if (value.includes('\0')) issues.push({ path: `env.${name}`, message: 'the value contains a NUL character' });
  }
  if (Object.keys(request.env).length > 64) issues.push({ path: 'env', message: 'at most 64 entries' });
  for (const [name, value] of Object.entries(request.secrets)) {
    // A local sandbox's environment is set on the sandbox's own command line, which the host's `ps` shows.
    if (!request.computer) issues.push({ path: `secrets.${name}`, message: 'secrets reach commands only on a computer whose policy allows them' });
    else if (name in request.env) issues.push({ path: `secrets.${name}`, message: 'also given in env' });
    if (value.includes('\0')) issues.push({ path: `secrets.${name}`, message: 'the value contains a NUL character' });
  }

  const limits: ExecLimits = { ...options.defaults };
  for (const [name, value] of Object.entries(request.limits) as Array<[keyof ExecLimits, number | undefined]>) {
    if (value === undefined) continue;
    if (value > options.maximum[name]) issues.push({ path: `limits.${name}`, message: `${value} is above the maximum ${options.maximum[name]}` });
    else limits[name] = value;
  }

  request.egress.forEach((egress, index) => {
    const origin = new URL(egress.url).origin;
    if (!options.egressOrigins.includes(origin)) issues.push({ path: `egress[${index}].url`, message: `${origin} is not an allowlisted egress origin (PACKETAGENT_SANDBOX_EGRESS_ORIGINS)` });
  });

  if (issues.length > 0) throw new ExecRefusedError('the sandbox refused the command', issues);
  const env: Record<string, string> = { PATH: SANDBOX_PATH, HOME: SANDBOX_PATHS.home, LANG: 'C.UTF-8', TMPDIR: SANDBOX_PATHS.tmp, ...request.env };
  return { argv: [...request.argv], cwd: cwd.ok ? cwd.cwd : '.', env, limits };
}
