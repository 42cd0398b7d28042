import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CREDENTIAL_NAME_PATTERN, redactResource, type JsonObject } from '@packetagent/contracts';
import { simpleGit, type SimpleGit } from 'simple-git';
import { z } from 'zod';
import { ToolFailure } from '../../errors';
import type { BuiltinTool, ToolEnvironment } from '../../internal/builtin';
import { abortable, deadline } from '../../internal/deadline';
import { canonicalUrl, checkHttpUrl, displayUrl } from '../../internal/http-shared';
import { toParameters } from '../../internal/schema';
import { oneLine, redactBulk, truncateText } from '../../internal/text';
import { bareHost, checkedDestination, effectivePort } from '../../net/destination';
import type { ResolvedAddress, ToolContext } from '../../tool.types';
import { Workspace } from '../../workspace/workspace-path';

const OPS = ['status', 'diff', 'commit', 'clone', 'push'] as const;
type GitOp = (typeof OPS)[number];
const STATUS_MAX_FILES = 500;

const ArgsSchema = z
  .strictObject({
    op: z.enum(OPS).describe('status, diff and commit work on the workspace repository; commit stages every change and commits on the run branch; push sends the run branch to origin; clone fills an empty workspace.'),
    url: z
      .string()
      .max(2048)
      .superRefine((url, ctx) => {
        checkHttpUrl('git', url, ctx);
        if (/[?#]/.test(url)) ctx.addIssue({ code: 'custom', message: 'a repository URL has no query or fragment' });
      })
      .describe('clone: the http(s) repository to clone. Every other op: the http(s) URL of the workspace repository\'s "origin" remote, which grants are written against.'),
    message: z.string().min(1).max(10_000).optional().describe('commit: the commit message.'),
    credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').optional().describe('clone and push: name of the credential holding a token for the remote.'),
  })
  .superRefine((args, ctx) => {
    if (args.op === 'commit' && args.message === undefined) ctx.addIssue({ code: 'custom', path: ['message'], message: 'required for op "commit"' });
    if (args.op !== 'commit' && args.message !== undefined) ctx.addIssue({ code: 'custom', path: ['message'], message: `not used by op "${args.op}"` });
    if (args.credential !== undefined && args.op !== 'clone' && args.op !== 'push') ctx.addIssue({ code: 'custom', path: ['credential'], message: `not used by op "${args.op}"` });
  });

export type GitArgs = z.output<typeof ArgsSchema>;

/** The branch a run commits on; a run id may hold characters a ref name cannot. */
export function runBranch(runId: string): string {
  const safe = runId.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200) || 'run';
  return `packetagent/run-${safe}`;
}

/**
 * Settings on every git invocation: no hooks, no fsmonitor, no system or user configuration,
 * http(s) transports only, no redirects, no prompts. Together they keep a repository's content
 * (or a model writing into the workspace) from making git run a program or reach another host.
 */
const BASE_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'protocol.allow=never',
  'protocol.https.allow=always',
  'protocol.http.allow=always',
  'http.followRedirects=false',
  'commit.gpgSign=false',
  'submodule.recurse=false',
  'user.name=PacketAgent run',
  'user.email=run@packetagent.invalid',
];

interface GitRun {
  git: SimpleGit;
}

function gitFor(baseDir: string, signal: AbortSignal, extraConfig: string[], configEnv: Array<[string, string]>): GitRun {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LANG: 'C',
    LC_ALL: 'C',
    HOME: '/nonexistent',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  // Secrets (an auth header) travel in the environment, never on the command line.
  configEnv.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  env['GIT_CONFIG_COUNT'] = String(configEnv.length);
  const git = simpleGit({
    baseDir,
    abort: signal,
    config: [...BASE_CONFIG, ...extraConfig],
    allowEnvironment: Object.keys(env).filter((key) => key.startsWith('GIT_')),
    // Any non-zero exit is a failure, also a quiet one (rev-parse --verify --quiet).
    errors: (error, result) => error ?? (result.exitCode === 0 ? undefined : Buffer.concat([...result.stdErr, Buffer.from(`git exited with ${result.exitCode}`)])),
    unsafe: {
      // Each of these is enabled for a setting above that makes git SAFER; no argument from the
      // model reaches a position where git would read it as an option.
      allowUnsafeHooksPath: true,
      allowUnsafeFsMonitor: true,
      allowUnsafeProtocolOverride: true,
      allowUnsafeConfigPaths: true,
      allowUnsafeConfigEnvCount: true,
    },
  }).env(env);
  return { git };
}

/** A remote URL without userinfo; null when it is not an http(s) URL. */
function httpRemote(raw: string): URL | null {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.username = '';
    url.password = '';
    url.hash = '';
    return url;
  } catch {
    return null;
  }
}

/** Messages from git go to the model and the logs: URLs lose their userinfo and query values. */
function gitFailure(error: unknown, what: string): ToolFailure {
  if (error instanceof ToolFailure) return error;
  const text = error instanceof Error ? error.message : String(error);
  return new ToolFailure('git_failed', `${what} failed: ${oneLine(redactResource(text), 500)}`, null, { cause: error });
}

async function requireRepository(workDir: string): Promise<string> {
  const workspace = await Workspace.open(workDir);
  try {
    // Only a repository rooted at the workspace: git must not walk up into an enclosing one.
    if ((await lstat(join(workspace.root, '.git'))).isDirectory()) return workspace.root;
  } catch {
    // reported below
  }
  throw new ToolFailure('not_a_repository', 'the run workspace is not a git repository (clone one first)');
}

async function originUrl(git: SimpleGit, push: boolean): Promise<string> {
  let raw: string;
  try {
    raw = (await git.raw(['remote', 'get-url', ...(push ? ['--push'] : []), 'origin'])).trim();
  } catch {
    throw new ToolFailure('no_remote', 'the workspace repository has no "origin" remote; git grants name repositories by their URL, so this workspace cannot be used with the git tool');
  }
  const url = httpRemote(raw);
  if (!url) throw new ToolFailure('remote_not_supported', 'the "origin" remote is not an http(s) URL; only http(s) repositories can be granted');
  return url.href;
}

/** The operation may only touch the repository the authorised URL names. */
async function checkOrigin(git: SimpleGit, args: GitArgs, push: boolean): Promise<string> {
  const origin = await originUrl(git, push);
  if (origin !== canonicalUrl(args.url)) {
    throw new ToolFailure('remote_mismatch', `the workspace repository's origin${push ? ' push URL' : ''} is ${displayUrl(origin)}, not ${displayUrl(canonicalUrl(args.url))}`);
  }
  return origin;
}

/** Network settings for one clone or push: the connection pinned to the checked address. */
async function networkConfig(url: URL, args: GitArgs, ctx: ToolContext, env: ToolEnvironment, signal: AbortSignal): Promise<{ config: string[]; configEnv: Array<[string, string]> }> {
  const pinned: ResolvedAddress = await abortable(checkedDestination(url, { resolveHost: env.resolveHost, allowPrivate: env.config.httpAllowPrivate }), signal);
  const address = pinned.family === 6 ? `[${pinned.address}]` : pinned.address;
  const config = [`http.curloptResolve=${bareHost(url)}:${effectivePort(url)}:${address}`, 'http.proxy='];
  const configEnv: Array<[string, string]> = [];
  if (args.credential) {
    const token = ctx.credentials[args.credential];
    if (!token) throw new ToolFailure('credential_unavailable', `the credential "${args.credential}" was not provided for this call`);
    const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
    configEnv.push([`http.${url.origin}/.extraHeader`, `Authorization: Basic ${basic}`]);
  }
  return { config, configEnv };
}

async function status(git: SimpleGit): Promise<{ output: JsonObject; summary: string }> {
  const result = await git.status();
  const files = result.files.slice(0, STATUS_MAX_FILES).map((file) => ({ path: file.path, index: file.index.trim(), workingDir: file.working_dir.trim() }));
  return {
    output: { branch: result.current, clean: result.isClean(), files, truncated: result.files.length > STATUS_MAX_FILES },
    summary: `status on ${result.current ?? 'a detached HEAD'}: ${result.files.length} changed file(s)`,
  };
}

async function hasHead(git: SimpleGit): Promise<boolean> {
  try {
    await git.raw(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
    return true;
  } catch {
    return false;
  }
}

async function diff(git: SimpleGit): Promise<{ output: JsonObject; summary: string }> {
  const options = ['--no-ext-diff', '--no-textconv', '--no-color'];
  const text = (await hasHead(git)) ? await git.raw(['diff', ...options, 'HEAD']) : await git.raw(['diff', ...options, '--cached']);
  const untracked = (await git.status()).not_added;
  const { text: shown, truncated } = truncateText(text);
  return {
    output: { diff: shown, truncated, untracked: untracked.slice(0, STATUS_MAX_FILES) },
    summary: `diff: ${text.length} characters${untracked.length ? `, ${untracked.length} untracked file(s)` : ''}`,
  };
}

async function branchExists(git: SimpleGit, branch: string): Promise<boolean> {
  try {
    await git.raw(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

async function currentBranch(git: SimpleGit): Promise<string | null> {
  try {
    return (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD'])).trim() || null;
  } catch {
    return null;
  }
}

async function commit(git: SimpleGit, args: GitArgs, ctx: ToolContext): Promise<{ output: JsonObject; summary: string }> {
  const branch = runBranch(ctx.runId);
  if ((await currentBranch(git)) !== branch) {
    if (await branchExists(git, branch)) await git.raw(['checkout', '--quiet', branch, '--']);
    else await git.raw(['checkout', '--quiet', '-b', branch]);
  }
  await git.raw(['add', '--all', '--', '.']);
  const staged = (await git.raw(['diff', '--cached', '--name-only', '-z'])).split('\0').filter(Boolean);
  if (staged.length === 0) throw new ToolFailure('nothing_to_commit', 'there are no changes to commit');
  await git.raw(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', args.message!]);
  const sha = (await git.raw(['rev-parse', 'HEAD'])).trim();
  return { output: { branch, commit: sha, files: staged.length }, summary: `committed ${staged.length} file(s) on ${branch} as ${sha.slice(0, 12)}` };
}

export const gitTool: BuiltinTool<GitArgs> = {
  descriptor: {
    tool: 'git',
    description:
      'Git in the run workspace: status, diff, commit (stages everything and commits on the run branch), push (the run branch to origin) and clone (into an empty workspace). ' +
      'Every call names the repository URL: the origin remote, or the repository to clone.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: (args) => args.op,
    resource: (args) => canonicalUrl(args.url),
    mutating: (args) => args.op === 'commit' || args.op === 'clone' || args.op === 'push',
    // Pushing the same branch again changes nothing; a second clone or commit is not the same act.
    idempotentByKey: (args) => args.op === 'status' || args.op === 'diff' || args.op === 'push',
    credentials: (args) => (args.credential ? [args.credential] : []),
    redact(args) {
      const redacted: JsonObject = { op: args.op, url: canonicalUrl(args.url) };
      if (args.message !== undefined) redacted['message'] = redactBulk(args.message);
      if (args.credential !== undefined) redacted['credential'] = args.credential;
      return redacted;
    },
  },

  async execute(args, ctx, env) {
    const limit = deadline(ctx.signal, env.config.gitTimeoutMs ?? 120_000);
    try {
      return await run(args, ctx, env, limit.signal);
    } catch (error) {
      // The git child was killed by the deadline: report the timeout, not the kill.
      if (limit.signal.aborted && !ctx.signal.aborted && limit.signal.reason instanceof ToolFailure) throw limit.signal.reason;
      throw gitFailure(error, `git ${args.op}`);
    } finally {
      limit.dispose();
    }
  },
};

async function run(args: GitArgs, ctx: ToolContext, env: ToolEnvironment, signal: AbortSignal) {
  const op: GitOp = args.op;
  if (op === 'clone') {
    const workspace = await Workspace.open(ctx.workDir);
    if ((await readdir(workspace.root)).length > 0) throw new ToolFailure('workspace_not_empty', 'clone needs an empty run workspace');
    const url = new URL(canonicalUrl(args.url));
    const network = await networkConfig(url, args, ctx, env, signal);
    const { git } = gitFor(workspace.root, signal, network.config, network.configEnv);
    await git.raw(['clone', '--quiet', '--no-recurse-submodules', '--', url.href, '.']);
    const { git: local } = gitFor(workspace.root, signal, [], []);
    return { ok: true, output: { url: displayUrl(url.href), branch: await currentBranch(local) }, summary: `cloned ${displayUrl(url.href)}` };
  }

  const root = await requireRepository(ctx.workDir);
  const { git } = gitFor(root, signal, [], []);
  await checkOrigin(git, args, false);
  if (op === 'status') return { ok: true, ...(await status(git)) };
  if (op === 'diff') return { ok: true, ...(await diff(git)) };
  if (op === 'commit') return { ok: true, ...(await commit(git, args, ctx)) };

  const pushUrl = new URL(await checkOrigin(git, args, true));
  const branch = runBranch(ctx.runId);
  if (!(await branchExists(git, branch))) throw new ToolFailure('nothing_to_push', `the run branch ${branch} has no commits yet`);
  const network = await networkConfig(pushUrl, args, ctx, env, signal);
  const { git: remote } = gitFor(root, signal, network.config, network.configEnv);
  await remote.raw(['push', '--quiet', '--no-verify', '--porcelain', 'origin', `refs/heads/${branch}:refs/heads/${branch}`]);
  return { ok: true, output: { branch, remote: displayUrl(pushUrl.href), pushed: true }, summary: `pushed ${branch} to ${displayUrl(pushUrl.href)}` };
}
