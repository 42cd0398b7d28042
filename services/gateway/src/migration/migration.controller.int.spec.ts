import { BUS_TOPOLOGY, CommandBus, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { DomainError, MigrationCommands, MigrationErrorCodes, type RunMigrationResult } from '@packetagent/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { completeSetup, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { DeploymentMigrationController, RunMigrationController } from './migration.controller';

type MigrateRunRequest = z.output<typeof MigrationCommands.migrateRun.request>;
type MigrateDeploymentRunsRequest = z.output<typeof MigrationCommands.migrateDeploymentRuns.request>;

const FROM = { version: 2, digest: 'a'.repeat(64), effectiveDigest: 'b'.repeat(64) };
const TO = { version: 3, digest: 'c'.repeat(64), effectiveDigest: 'd'.repeat(64) };

class RefusedError extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    override readonly retryable = false,
  ) {
    super(message);
  }
}

/**
 * Stands in for the supervisor on the real bus (the gateway may not depend on it): knows a few
 * runs by workspace, answers from what it is asked, records every request, and refuses the way
 * the contract says the supervisor does.
 */
class RecordingSupervisor {
  readonly runRequests: MigrateRunRequest[] = [];
  readonly deploymentRequests: MigrateDeploymentRunsRequest[] = [];
  /** runId → the workspace it belongs to and how the supervisor answers for it. */
  readonly runs = new Map<string, { workspaceId: string; answer: 'compare' | 'diverge' | 'running' | 'busy' }>();
  private readonly bus: CommandBus;

  constructor(
    private readonly nc: NatsConnection,
    topo: Topology,
  ) {
    this.bus = new CommandBus(nc, topo);
  }

  async start(): Promise<void> {
    this.bus.handle(MigrationCommands.migrateRun, async (request) => {
      this.runRequests.push(request);
      const run = this.runs.get(request.runId);
      if (!run || run.workspaceId !== request.workspaceId) throw new RefusedError(MigrationErrorCodes.runNotFound, `run ${request.runId} not found`);
      if (run.answer === 'running') throw new RefusedError(MigrationErrorCodes.runNotWaiting, `run ${request.runId} is running, not waiting`);
      if (run.answer === 'busy') throw new RefusedError(MigrationErrorCodes.runBusy, `run ${request.runId} is being driven`, true);
      if (request.version !== TO.version) throw new RefusedError(MigrationErrorCodes.versionNotDeployed, `the deployment pins version ${TO.version}, not ${request.version}`);
      return this.result(request.runId, run.answer === 'diverge' ? 'refused' : request.dryRun ? 'would_migrate' : 'migrated');
    });
    this.bus.handle(MigrationCommands.migrateDeploymentRuns, async (request) => {
      this.deploymentRequests.push(request);
      const runs = [...this.runs].filter(([, run]) => run.workspaceId === request.workspaceId && (run.answer === 'compare' || run.answer === 'diverge'));
      return {
        deploymentId: request.deploymentId,
        results: runs.map(([runId, run]) => this.result(runId, run.answer === 'diverge' ? 'refused' : request.dryRun ? 'would_migrate' : 'migrated')),
      };
    });
    await this.nc.flush();
  }

  stop(): Promise<void> {
    return this.bus.drain();
  }

  private result(runId: string, outcome: RunMigrationResult['outcome']): RunMigrationResult {
    return {
      runId,
      outcome,
      from: FROM,
      to: TO,
      decisionsCompared: outcome === 'refused' ? 2 : 5,
      divergence:
        outcome === 'refused'
          ? { streamVersion: 7, globalPosition: 412, eventType: 'run.tool_decided', recorded: 'allow http_fetch GET', proposed: 'approval_required http_fetch GET' }
          : null,
      refusal: null,
    };
  }
}

interface ProblemAnswer {
  status: number;
  code: string;
  errors?: { path: string; message: string }[];
}

describe(`${RunMigrationController.name} and ${DeploymentMigrationController.name}`, () => {
  let sut: GatewayTestApp;
  let supervisor: RecordingSupervisor;
  let ws: string;
  let ownerKey: string;
  let adminKey: { id: string; secret: string };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const migratePath = (runId: string, workspace = ws) => `/api/v1/workspaces/${workspace}/runs/${runId}/migrate`;
  const deploymentPath = (deploymentId: string) => `/api/v1/workspaces/${ws}/deployments/${deploymentId}/migrate-runs`;
  const keyWithRole = async (role: string) =>
    (await sut.request<{ id: string; secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(ownerKey), body: { name: role, role } })).body;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [RunMigrationController, DeploymentMigrationController] });
    ({ workspaceId: ws, apiKey: ownerKey } = await completeSetup(sut));
    adminKey = await keyWithRole('admin');
    supervisor = new RecordingSupervisor(sut.app.get<NatsConnection>(NATS_CONNECTION), sut.app.get<Topology>(BUS_TOPOLOGY));
    supervisor.runs.set('run-waiting', { workspaceId: ws, answer: 'compare' });
    supervisor.runs.set('run-diverging', { workspaceId: ws, answer: 'diverge' });
    supervisor.runs.set('run-running', { workspaceId: ws, answer: 'running' });
    supervisor.runs.set('run-busy', { workspaceId: ws, answer: 'busy' });
    supervisor.runs.set('run-elsewhere', { workspaceId: 'ws_elsewhere', answer: 'compare' });
    await supervisor.start();
  });

  afterAll(async () => {
    await supervisor.stop();
    await sut.close();
  });

  beforeEach(() => {
    supervisor.runRequests.length = 0;
    supervisor.deploymentRequests.length = 0;
  });

  it('forwards the run, the version, dryRun false by default and the caller as actor, and answers the result', async () => {
    const answer = await sut.request<RunMigrationResult>('POST', migratePath('run-waiting'), { headers: bearer(adminKey.secret), body: { version: 3 } });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ runId: 'run-waiting', outcome: 'migrated', from: FROM, to: TO, decisionsCompared: 5, divergence: null, refusal: null });
    expect(supervisor.runRequests).toEqual([{ workspaceId: ws, runId: 'run-waiting', version: 3, dryRun: false, actor: { kind: 'api_key', id: adminKey.id } }]);
  });

  it('forwards a dry run as one', async () => {
    const answer = await sut.request<RunMigrationResult>('POST', migratePath('run-waiting'), { headers: bearer(adminKey.secret), body: { version: 3, dryRun: true } });

    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('would_migrate');
    expect(supervisor.runRequests.map((request) => request.dryRun)).toEqual([true]);
  });

  it('answers a comparison that decided differently as 200, outcome refused, with the first divergence', async () => {
    const answer = await sut.request<RunMigrationResult>('POST', migratePath('run-diverging'), { headers: bearer(ownerKey), body: { version: 3 } });

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      outcome: 'refused',
      decisionsCompared: 2,
      divergence: { streamVersion: 7, globalPosition: 412, eventType: 'run.tool_decided', recorded: 'allow http_fetch GET', proposed: 'approval_required http_fetch GET' },
    });
  });

  it.each([
    ['no version', {}, 'version'],
    ['a fractional version', { version: 2.5 }, 'version'],
    ['a version as text', { version: '3' }, 'version'],
    ['version 0', { version: 0 }, 'version'],
    ['dryRun as text', { version: 3, dryRun: 'yes' }, 'dryRun'],
    ['an unknown key', { version: 3, force: true }, ''],
  ])('refuses a body with %s as 400 problem+json and asks the supervisor nothing', async (_case, body, path) => {
    for (const target of [migratePath('run-waiting'), deploymentPath('dep-1')]) {
      const answer = await sut.request<ProblemAnswer>('POST', target, { headers: bearer(ownerKey), body });

      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.body.code).toBe('validation_failed');
      expect(answer.body.errors?.map((issue) => issue.path)).toEqual([path]);
    }
    expect(supervisor.runRequests).toEqual([]);
    expect(supervisor.deploymentRequests).toEqual([]);
  });

  it('answers 401 without credentials', async () => {
    for (const target of [migratePath('run-waiting'), deploymentPath('dep-1')]) {
      const answer = await sut.request<ProblemAnswer>('POST', target, { body: { version: 3 } });

      expect(answer.status).toBe(401);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(supervisor.runRequests).toEqual([]);
  });

  it('answers 403 to a member or viewer: migrating takes deployment-control', async () => {
    for (const role of ['member', 'viewer']) {
      const key = (await keyWithRole(role)).secret;
      for (const target of [migratePath('run-waiting'), deploymentPath('dep-1')]) {
        const answer = await sut.request<ProblemAnswer>('POST', target, { headers: bearer(key), body: { version: 3 } });

        expect(answer.status).toBe(403);
        expect(answer.body.code).toBe('permission_denied');
      }
    }
    expect(supervisor.runRequests).toEqual([]);
    expect(supervisor.deploymentRequests).toEqual([]);
  });

  it("answers 404 for another workspace's run, and for a workspace the caller is not in", async () => {
    const elsewhere = await sut.request<ProblemAnswer>('POST', migratePath('run-elsewhere'), { headers: bearer(ownerKey), body: { version: 3 } });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('run_not_found');
    expect(supervisor.runRequests.map((request) => [request.workspaceId, request.runId])).toEqual([[ws, 'run-elsewhere']]);

    const outside = await sut.request<ProblemAnswer>('POST', migratePath('run-elsewhere', 'ws_elsewhere'), { headers: bearer(ownerKey), body: { version: 3 } });
    expect(outside.status).toBe(404);
    expect(supervisor.runRequests).toHaveLength(1);
  });

  it.each([
    ['a run that is not waiting', 'run-running', 3, 'run_not_waiting'],
    ['a version the deployment does not pin', 'run-waiting', 4, 'version_not_deployed'],
    ['a run a replica is driving', 'run-busy', 3, 'run_busy'],
  ])('answers 409 for %s', async (_case, runId, version, code) => {
    const answer = await sut.request<ProblemAnswer>('POST', migratePath(runId), { headers: bearer(ownerKey), body: { version } });

    expect(answer.status).toBe(409);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body.code).toBe(code);
  });

  it("compares a deployment's runs by default and moves them only when dryRun is false", async () => {
    const compared = await sut.request<{ deploymentId: string; results: RunMigrationResult[] }>('POST', deploymentPath('dep-1'), { headers: bearer(adminKey.secret), body: { version: 3 } });

    expect(compared.status).toBe(200);
    expect(compared.body.deploymentId).toBe('dep-1');
    expect(compared.body.results.map((result) => [result.runId, result.outcome])).toEqual([
      ['run-waiting', 'would_migrate'],
      ['run-diverging', 'refused'],
    ]);

    const moved = await sut.request<{ results: RunMigrationResult[] }>('POST', deploymentPath('dep-1'), { headers: bearer(adminKey.secret), body: { version: 3, dryRun: false } });

    expect(moved.body.results.map((result) => result.outcome)).toEqual(['migrated', 'refused']);
    expect(supervisor.deploymentRequests).toEqual([
      { workspaceId: ws, deploymentId: 'dep-1', version: 3, dryRun: true, actor: { kind: 'api_key', id: adminKey.id } },
      { workspaceId: ws, deploymentId: 'dep-1', version: 3, dryRun: false, actor: { kind: 'api_key', id: adminKey.id } },
    ]);
  });

  it('documents both routes with their permission, body and answer', async () => {
    type Operation = { 'x-required-permission'?: string; requestBody?: unknown; responses: Record<string, unknown>; tags?: string[] };
    const document = (await sut.request<{ paths: Record<string, Record<string, Operation>> }>('GET', '/api/v1/openapi.json')).body;
    const run = document.paths['/api/v1/workspaces/{ws}/runs/{runId}/migrate']?.['post'];
    const deployment = document.paths['/api/v1/workspaces/{ws}/deployments/{deploymentId}/migrate-runs']?.['post'];

    expect(run).toMatchObject({ 'x-required-permission': 'deployment-control', tags: ['runs'] });
    expect(deployment).toMatchObject({ 'x-required-permission': 'deployment-control', tags: ['deployments'] });
    expect(JSON.stringify(run?.requestBody)).toContain('MigrateRunDto');
    expect(JSON.stringify(deployment?.requestBody)).toContain('MigrateDeploymentRunsDto');
    expect(Object.keys(run?.responses ?? {})).toEqual(expect.arrayContaining(['200', 'default']));
  });
});
