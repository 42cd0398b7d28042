import type { AdeDoorContext, DeploymentView } from './ade-door-client';
import { webhookLines } from './ade-deploy';

export function deploymentLines(view: DeploymentView, urlOf: (path: string) => string): string[] {
  return [
    `deployment ${view.id}  ${view.status}${view.statusReason ? ` (${view.statusReason})` : ''}`,
    `worker ${view.workerName} (${view.workerId}) version ${view.version} digest ${view.digest}`,
    `runs: ${view.activeRuns} active, ${view.heldRuns} held, at most ${view.maxConcurrentRuns} at once`,
    ...webhookLines(view.webhooks ?? [], urlOf),
  ];
}

/** `packetagent ade deployment get DEPLOYMENT`. */
export async function inspectDeployment(context: AdeDoorContext, deploymentId: string): Promise<void> {
  const view = await context.door.inspect(deploymentId);
  context.report(deploymentLines(view, (path) => context.door.client.url(path)), view);
}

/** `packetagent ade deployment runs DEPLOYMENT`: one page, newest first; the last line names the next page's cursor. */
export async function listDeploymentRuns(context: AdeDoorContext, deploymentId: string, options: { cursor?: string; limit: number }): Promise<void> {
  const page = await context.door.runs(deploymentId, options);
  const lines = page.items.map((run) => `${run.id}  ${run.state}${run.hold ? ` (held: ${run.hold})` : ''}  version ${run.version}  ${run.createdAt}`);
  if (lines.length === 0) lines.push('no runs');
  if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
  context.report(lines, page);
}

/** `packetagent ade deployment pause|resume|revoke|rollback DEPLOYMENT`. */
export async function controlDeployment(
  context: AdeDoorContext,
  action: 'pause' | 'resume' | 'revoke' | 'rollback',
  deploymentId: string,
  options: { reason?: string; version?: number },
): Promise<void> {
  const body = { ...(options.version !== undefined ? { version: options.version } : {}), ...(options.reason !== undefined ? { reason: options.reason } : {}) };
  const view = await context.door.control(deploymentId, action, body);
  context.report(deploymentLines(view, (path) => context.door.client.url(path)), view);
}
