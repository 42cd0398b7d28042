// Workers, scripts and runs over the public API, as the execution benchmarks make them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_TERMINAL_EVENT_TYPES } from '@packetagent/contracts';
import { expectStatus, request } from './app-process';

/**
 * How the script is priced. A model priced at zero (local, free scripts) reserves nothing; a
 * priced one reserves before each call and settles after it: two more requests, each a ledger
 * transaction with its own commit.
 */
export type Pricing = 'free' | 'priced';
const PRICES: Record<Pricing, { inputPerMTokUsd: number; outputPerMTokUsd: number }> = {
  free: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
  priced: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
};

export const UPDATE_TURN = { toolCalls: [{ name: 'update_criteria', arguments: { criteria: ['done'], reason: 'step' } }] };
export const FINISH_TURN = { toolCalls: [{ name: 'finish', arguments: { summary: 'done', criteria: [{ criterion: 'done', met: true }] } }] };
export const TERMINAL_TYPES: readonly string[] = RUN_TERMINAL_EVENT_TYPES;

/** A script is YAML, and JSON is YAML. */
export function writeScript(dir: string, name: string, turns: object[], pricing: Pricing): void {
  writeFileSync(join(dir, `${name}.yaml`), JSON.stringify({ pricing: PRICES[pricing], turns }));
}

export interface Owner {
  baseUrl: string;
  workspaceId: string;
  apiKey: string;
}

function workerYaml(name: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
tools: [{ tool: update_criteria, approval: never }]
bounds: { maxConcurrentRuns: 1000, maxIterations: 1000, maxToolCalls: 1000 }
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

/** Creates the worker `name` (whose script has the same name) and answers `count` deployments of it. */
export async function deploy(owner: Owner, name: string, count: number): Promise<string[]> {
  const auth = { authorization: `Bearer ${owner.apiKey}` };
  const api = (path: string) => `${owner.baseUrl}/api/v1/workspaces/${owner.workspaceId}${path}`;
  const worker = await request<{ id: string }>(api('/workers'), 'POST', { body: { name }, headers: auth });
  expectStatus(worker, 201, `creating worker ${name}`);
  const version = await request(api(`/workers/${worker.body.id}/versions`), 'POST', { raw: workerYaml(name), headers: { ...auth, 'content-type': 'application/yaml' } });
  expectStatus(version, 201, `applying worker ${name}`);
  const deployments: string[] = [];
  for (let i = 0; i < count; i++) {
    const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId: worker.body.id, acceptMissing: true }, headers: auth });
    expectStatus(deployed, 201, `deploying ${name}`);
    deployments.push(deployed.body.id);
  }
  return deployments;
}

export async function startRun(baseUrl: string, owner: Owner, deploymentId: string): Promise<string> {
  const started = await request<{ runId: string; hold: string | null }>(`${baseUrl}/api/v1/workspaces/${owner.workspaceId}/deployments/${deploymentId}/runs`, 'POST', {
    body: { input: {} },
    headers: { authorization: `Bearer ${owner.apiKey}` },
  });
  expectStatus(started, 201, 'starting a run');
  // A held run waits for a slot: the benchmark would measure the wait, not execution.
  if (started.body.hold !== null) throw new Error(`run ${started.body.runId} was held (${started.body.hold}) instead of admitted`);
  return started.body.runId;
}

export async function withScriptsDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'pa-bench-scripts-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
