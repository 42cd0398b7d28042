import {
  commandArguments,
  ComputerNameSchema,
  CredentialNameSchema,
  EgressRequestSchema,
  EXEC_ENV_NAME,
  normaliseResource,
  SECRET_LIKE_ENV_NAME,
  type ExecResult,
  type JsonObject,
} from '@packetagent/contracts';
import { z } from 'zod';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { normaliseWorkspacePath } from '../../workspace/workspace-path';
import { sandboxFailure } from '../sandbox-failure';

/** Most credentials one command may get as environment variables. */
const MAX_SECRETS = 16;

const ArgsSchema = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(2000)
    .superRefine((command, ctx) => {
      const checked = normaliseResource('run_command', command);
      if (!checked.ok) return ctx.addIssue({ code: 'custom', message: checked.message });
      const split = commandArguments(command);
      if (!split.ok) ctx.addIssue({ code: 'custom', message: split.message });
    })
    .describe('The program and its arguments, e.g. "npm test"; quotes keep spaces in an argument. No shell: ; | & $ < > and backticks are refused.'),
  computer: ComputerNameSchema.optional().describe("A registered computer to run the command on, over SSH, by name; the run's own sandbox when omitted."),
  cwd: z
    .string()
    .max(1024)
    .refine((cwd) => !cwd.includes('\0'), 'must not contain a NUL character')
    .optional()
    .describe('Directory relative to the run workspace (the workspace itself when omitted); on a computer, a directory there: absolute, or relative to its first root.'),
  timeoutSeconds: z.number().int().min(1).max(3600).optional().describe('Wall time limit for the command; the whole process tree is killed at it.'),
  env: z
    .record(z.string(), z.string().max(4096))
    .superRefine((env, ctx) => {
      for (const name of Object.keys(env)) {
        if (!EXEC_ENV_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'not a plain environment name' });
        else if (SECRET_LIKE_ENV_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'looks like a secret: secrets come from credentials, never the environment' });
      }
    })
    .optional()
    .describe('Environment variables for the command (names from the operator allowlist only).'),
  egress: z.array(EgressRequestSchema).max(16).optional().describe('Files fetched (GET only, from operator-allowlisted origins) before the command starts, read-only at /input/egress/<as>.'),
  secrets: z
    .record(z.string(), CredentialNameSchema)
    .superRefine((secrets, ctx) => {
      const names = Object.keys(secrets);
      if (names.length > MAX_SECRETS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_SECRETS} secrets` });
      for (const name of names) if (!EXEC_ENV_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'not a plain environment name' });
    })
    .optional()
    .describe('Environment variables set from credentials the worker is granted, as {"NAME": "credential_name"}; the values never appear in the call or its record.'),
}).superRefine((args, ctx) => {
  // A computer's directories are its own: only the run workspace is confined here.
  if (args.cwd !== undefined && args.computer === undefined) {
    const checked = normaliseWorkspacePath(args.cwd, { allowRoot: true });
    if (!checked.ok) ctx.addIssue({ code: 'custom', path: ['cwd'], message: checked.message });
  }
  for (const name of Object.keys(args.secrets ?? {})) {
    if (args.env && Object.hasOwn(args.env, name)) ctx.addIssue({ code: 'custom', path: ['secrets', name], message: 'is also set in env: a variable comes from one of them' });
  }
});

export type RunCommandArgs = z.output<typeof ArgsSchema>;

/** What the model sees of a finished command: exit, limit, and a preview of each stream. */
function commandOutput(result: ExecResult): JsonObject {
  const output: JsonObject = {
    exitCode: result.exitCode,
    state: result.state,
    stdout: result.stdout.preview,
    stderr: result.stderr.preview,
    stdoutBytes: result.stdout.bytes,
    stderrBytes: result.stderr.bytes,
    durationMs: result.durationMs,
  };
  if (result.signal) output['signal'] = result.signal;
  if (result.limit) output['limit'] = result.limit;
  if (result.message) output['message'] = result.message;
  if (result.stdout.truncated || result.stderr.truncated) output['truncated'] = 'the preview is the start of the output; the whole of it is kept with the exec';
  if (result.egress.length) output['egress'] = result.egress.map((file) => ({ as: file.as, url: file.url, size: file.size, digest: file.digest }));
  if (result.computer) output['computer'] = result.computer;
  // Whether the whole process group was seen gone: a kill the far side could not confirm may have left some of it running.
  if (result.state === 'killed' || result.state === 'lost') output['killConfirmed'] = result.killConfirmed;
  return output;
}

function summaryOf(result: ExecResult, computer?: string): string {
  if (result.state === 'lost') return `the link to computer "${result.computer ?? computer}" broke while the command ran: whether it finished is not known`;
  if (result.state === 'failed') return `did not start: ${result.message ?? 'unknown reason'}`;
  if (result.limit) return `killed at its ${result.limit.replace('_', ' ')} limit after ${result.durationMs} ms`;
  return `exit ${result.exitCode} in ${result.durationMs} ms (${result.stdout.bytes} bytes out, ${result.stderr.bytes} bytes err)`;
}

export const runCommandTool: BuiltinTool<RunCommandArgs> = {
  descriptor: {
    tool: 'run_command',
    description:
      "Runs a program in the run's sandbox (no network, hard limits), in the run workspace (/workspace), and returns its exit code and output. " +
      'With `computer`, runs it over SSH on that registered computer instead (only computers the worker is granted; the computer\'s own policy may ask a person first), in a directory there. ' +
      '`secrets` puts granted credentials in its environment by name.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'exec',
    resource(args) {
      const checked = normaliseResource('run_command', args.command);
      return checked.ok ? checked.value : args.command;
    },
    mutating: () => true,
    idempotentByKey: () => false,
    credentials: (args) => [...new Set(Object.values(args.secrets ?? {}))].sort(),
    target: (args) => args.computer ?? null,
    redact: (args) => ({
      command: args.command,
      ...(args.computer !== undefined ? { computer: args.computer } : {}),
      ...(args.cwd !== undefined ? { cwd: args.cwd } : {}),
      ...(args.timeoutSeconds !== undefined ? { timeoutSeconds: args.timeoutSeconds } : {}),
      ...(args.env !== undefined ? { env: Object.keys(args.env).sort() } : {}),
      ...(args.egress !== undefined ? { egress: args.egress.map((file) => file.url) } : {}),
      // Names only, of the variables and of the credentials they come from.
      ...(args.secrets !== undefined ? { secrets: Object.fromEntries(Object.entries(args.secrets).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) } : {}),
    }),
  },

  async abandon(_args, ctx, env) {
    // The exec of a call is named by its idempotency key: a lost call's command is killed, not left to its wall time.
    await env.sandbox?.cancel(ctx.workspaceId, ctx.idempotencyKey);
  },

  async execute(args, ctx, env) {
    if (!env.sandbox) return failure('sandbox_unavailable', 'no sandbox service is configured: run_command never runs on the host');
    const split = commandArguments(args.command);
    if (!split.ok) return failure('invalid_command', split.message);
    if (args.computer !== undefined && !ctx.computerGrant) {
      return failure('computer_not_authorized', `no grant for the key of computer "${args.computer}" came with this call: commands run on a computer only when policy allows them there`);
    }
    const secrets: Record<string, string> = {};
    for (const [name, credential] of Object.entries(args.secrets ?? {})) {
      const value = ctx.credentials[credential];
      if (!value) return failure('credential_unavailable', `the credential "${credential}" was not provided for this call`);
      secrets[name] = value;
    }
    let result: ExecResult;
    try {
      result = await env.sandbox.exec(
        {
          // One exec per effect: a repeat of the same call names the same exec and gets its result.
          execId: ctx.idempotencyKey,
          workspaceId: ctx.workspaceId,
          runId: ctx.runId,
          argv: split.argv,
          cwd: args.cwd ?? '.',
          env: args.env ?? {},
          limits: args.timeoutSeconds !== undefined ? { wallTimeMs: args.timeoutSeconds * 1000 } : {},
          egress: args.egress ?? [],
          secrets,
          ...(args.computer !== undefined ? { computer: { name: args.computer, keyGrant: ctx.computerGrant! } } : {}),
          requestedBy: { kind: 'service', id: 'supervisor' },
        },
        ctx.signal,
      );
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      return sandboxFailure(error);
    }
    const output = commandOutput(result);
    const ok = result.state === 'exited' && result.exitCode === 0;
    if (ok) return { ok, output, summary: summaryOf(result) };
    if (result.state === 'lost') {
      const detail = summaryOf(result, args.computer);
      const error = { code: 'transport_lost', message: detail };
      return { ok: false, output: { ...output, error }, summary: `transport_lost: ${detail}`, error, lost: { cause: 'transport_lost', detail } };
    }
    const code = result.state === 'failed' ? 'command_not_started' : result.limit ? 'command_limit' : 'command_failed';
    return { ok, output: { ...output, error: { code, message: summaryOf(result) } }, summary: `${code}: ${summaryOf(result)}`, error: { code, message: summaryOf(result) } };
  },
};
