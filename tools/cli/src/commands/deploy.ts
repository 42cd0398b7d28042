import { z } from 'zod';
import type { CommandContext } from '../context';
import { loadDocument } from '../documents';
import { ApiError, CliError, ExitCode, type Issue, UsageError } from '../errors';
import { findWorker } from './workers';

const MissingSchema = z.looseObject({ kind: z.string(), name: z.string(), reason: z.string() });

const TriggerSchema = z.looseObject({
  triggerId: z.string().min(1),
  kind: z.string(),
  url: z.string().optional(),
  secret: z.string().optional(),
});
const DeploymentSchema = z.looseObject({
  id: z.string().min(1),
  version: z.number().int().positive().optional(),
  triggers: z.array(TriggerSchema).default([]),
  /** Some servers return the once-shown webhook secrets beside the triggers rather than in them. */
  webhooks: z.array(z.looseObject({ triggerId: z.string(), secret: z.string() })).default([]),
  /** What the version lacks here; present on servers that check before deploying. */
  readiness: z.looseObject({ ready: z.boolean(), missing: z.array(MissingSchema).default([]) }).optional(),
});

type Missing = z.infer<typeof MissingSchema>;

/** `credential github_token: not stored in the workspace vault` */
function missingIssue(item: Missing): Issue {
  return { path: `${item.kind} ${item.name}`, message: item.reason };
}

/**
 * The server refuses a version that lacks credentials, providers, tools or computers here
 * (`deployment_not_ready`): the refusal is worded for the command line, each missing thing on a
 * line of its own, and says how to deploy anyway.
 */
function notReady(error: ApiError, workerName: string): CliError {
  const listed = z.array(MissingSchema).safeParse(error.problem?.['missing']);
  const issues = listed.success && listed.data.length ? listed.data.map(missingIssue) : error.issues.map((issue) => ({ ...issue, path: issue.path.replace(/^(\w+?)s\./, '$1 ') }));
  return new CliError(
    `worker ${workerName} cannot run here yet, ${issues.length} missing (deploy with --accept-missing to deploy it anyway; its runs fail until these exist)`,
    ExitCode.failure,
    issues,
  );
}

export interface DeployOptions {
  version?: number;
  overrides?: string;
  /** Deploy even though the version lacks something here. */
  acceptMissing?: boolean;
}

/** `packetagent deploy WORKER`: deploys a version (the latest unless --version) of the worker named or identified. */
export async function deploy(context: CommandContext, workerRef: string, options: DeployOptions): Promise<void> {
  const { client } = context;
  let overrides: unknown;
  if (options.overrides !== undefined) {
    const document = await loadDocument(options.overrides, context.documents);
    if (typeof document.value !== 'object' || document.value === null || Array.isArray(document.value)) {
      throw new UsageError(`${document.label}: overrides must be an object`);
    }
    overrides = document.value;
  }
  const worker = await findWorker(client, (w) => w.id === workerRef || w.name === workerRef);
  if (!worker) throw new CliError(`no worker named or identified "${workerRef}" in this workspace`, ExitCode.failure);

  // Without a version the server deploys the latest one.
  const body = {
    workerId: worker.id,
    ...(options.version !== undefined ? { version: options.version } : {}),
    ...(overrides ? { overrides } : {}),
    ...(options.acceptMissing ? { acceptMissing: true } : {}),
  };
  let deployment: z.infer<typeof DeploymentSchema>;
  try {
    deployment = await client.post(client.workspacePath('deployments'), { json: body }, DeploymentSchema);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'deployment_not_ready') throw notReady(error, worker.name);
    throw error;
  }

  const lines = [`deployment ${deployment.id} (worker ${worker.name}${deployment.version ? ` version ${deployment.version}` : ''})`];
  const missing = deployment.readiness?.missing ?? [];
  if (missing.length) {
    lines.push(`not ready: ${missing.length} missing; its runs fail until these exist:`);
    for (const item of missing.map(missingIssue)) lines.push(`  ${item.path}: ${item.message}`);
  }
  const webhooks = deployment.triggers
    .filter((trigger) => trigger.kind === 'webhook')
    .map((trigger) => ({
      triggerId: trigger.triggerId,
      url: client.url(trigger.url ?? `hooks/${encodeURIComponent(trigger.triggerId)}`),
      secret: trigger.secret ?? deployment.webhooks.find((w) => w.triggerId === trigger.triggerId)?.secret,
    }));
  for (const hook of webhooks) {
    lines.push(`webhook ${hook.triggerId}: ${hook.url}`);
    if (hook.secret) lines.push(`  secret: ${hook.secret}  (shown once: store it now)`);
  }
  context.report(lines, { ...deployment, webhooks });
}
