import { ApiError, UsageError } from '../errors';
import { readRaw } from './ade-package';
import { AdeExitCode, AdeOutcome, type AdeDoorContext, type DeployReceipt, type RunStarted } from './ade-door-client';
import { runInputOf } from './run';

/** Each secret with its URL, and the warning that it is not shown again. */
export function webhookLines(webhooks: ReadonlyArray<{ triggerId: string; secret: string }>, urlOf: (path: string) => string): string[] {
  return webhooks.flatMap((hook) => [`webhook ${hook.triggerId}: ${urlOf(`hooks/${encodeURIComponent(hook.triggerId)}`)}`, `  secret: ${hook.secret}  (shown once: store it now)`]);
}

/** The receipt of a deploy or an update: what now runs, bound to the package it came from. */
export function receiptLines(receipt: DeployReceipt, operation: 'deploy' | 'update', urlOf: (path: string) => string): string[] {
  const what =
    operation === 'deploy'
      ? receipt.created
        ? 'created'
        : 'unchanged: deployed before with this package or idempotency key'
      : receipt.created
        ? `moved to version ${receipt.version}`
        : 'unchanged: it already runs this package';
  return [
    `deployment ${receipt.deploymentId} ${what}`,
    `worker ${receipt.workerName} (${receipt.workerId}) version ${receipt.version}`,
    `version digest ${receipt.versionDigest}`,
    `package digest ${receipt.packageDigest}`,
    receipt.signedBy.length ? `signed by ${receipt.signedBy.join(', ')}` : 'unsigned',
    ...webhookLines(receipt.webhooks, urlOf),
  ];
}

/** The file's bytes once they are known to be JSON: they are embedded in the request body as they are. */
async function packageBytes(context: AdeDoorContext, file: string): Promise<Buffer> {
  const bytes = await readRaw(context.documents, file);
  try {
    JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UsageError(`${file}: not JSON (${error instanceof Error ? error.message : String(error)}): give the package or envelope \`ade package\` or \`ade sign\` wrote`);
  }
  return bytes;
}

/** The refusals of the package's signer (or of its absence): the server's 403, but not a credential's fault. */
const SIGNER_REFUSALS = new Set(['publisher_untrusted', 'package_unsigned']);

/** A signer the workspace does not accept exits as validate does for it (4), not as a refused token (3). */
async function signerRefusedAsOutcome<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.code !== null && SIGNER_REFUSALS.has(error.code)) throw new AdeOutcome(error.message, AdeExitCode.refused);
    throw error;
  }
}

/** `packetagent ade deploy FILE`: a deployment of the package; the same package, or idempotency key, again answers the same one. */
export async function deployPackage(context: AdeDoorContext, file: string, options: { idempotencyKey?: string }): Promise<void> {
  const receipt = await signerRefusedAsOutcome(context.door.deploy(await packageBytes(context, file), options.idempotencyKey));
  context.report(receiptLines(receipt, 'deploy', (path) => context.door.client.url(path)), receipt);
}

/** `packetagent ade update DEPLOYMENT FILE`: a new version from the package, and the deployment moved to it. */
export async function updateDeployment(context: AdeDoorContext, deploymentId: string, file: string): Promise<void> {
  const receipt = await signerRefusedAsOutcome(context.door.update(deploymentId, await packageBytes(context, file)));
  context.report(receiptLines(receipt, 'update', (path) => context.door.client.url(path)), receipt);
}

export function runStartedLine(run: RunStarted): string {
  const held = run.hold ? ` (held: ${run.hold})` : '';
  return `run ${run.runId}  ${run.state}${held}${run.duplicate ? '  (started before with this idempotency key)' : ''}`;
}

/** `packetagent ade run DEPLOYMENT`: a manual run; the same idempotency key again answers the same run. */
export async function activateDeployment(context: AdeDoorContext, deploymentId: string, options: { input?: string; idempotencyKey?: string }): Promise<void> {
  const body = {
    ...(options.input !== undefined ? { input: await runInputOf(context.documents, options.input) } : {}),
    ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
  };
  const run = await context.door.activate(deploymentId, body);
  context.report([runStartedLine(run)], run);
}
