import { z } from 'zod';
import type { CommandContext } from '../context';
import { loadDocument } from '../documents';
import { CliError, ExitCode, UsageError } from '../errors';
import { findWorker } from './workers';

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
});

export interface DeployOptions {
  version?: number;
  overrides?: string;
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
  const body = { workerId: worker.id, ...(options.version !== undefined ? { version: options.version } : {}), ...(overrides ? { overrides } : {}) };
  const deployment = await client.post(client.workspacePath('deployments'), { json: body }, DeploymentSchema);

  const lines = [`deployment ${deployment.id} (worker ${worker.name}${deployment.version ? ` version ${deployment.version}` : ''})`];
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
