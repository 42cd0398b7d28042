import { IntakeCommands, runStreamId } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { definition, startIntake, type IntakeHarness } from '../testing/intake.testkit';

describe('run admission', () => {
  let h: IntakeHarness;
  let deploymentId: string;

  beforeAll(async () => {
    h = await startIntake();
  });
  afterAll(() => h.close());

  async function deploy(overrides: Record<string, unknown> = {}, name = `w-${Math.random().toString(36).slice(2, 8)}`) {
    const { id: workerId } = await h.bus.request(IntakeCommands.createWorker, { workspaceId: h.workspaceId, actor: h.actor, name });
    await h.bus.request(IntakeCommands.createVersion, {
      workspaceId: h.workspaceId,
      actor: h.actor,
      workerId,
      source: definition({ name, ...overrides }),
      format: 'json',
    });
    return h.bus.request(IntakeCommands.createDeployment, { workspaceId: h.workspaceId, actor: h.actor, workerId });
  }

  const activate = (deployment: string, dedupeKey: string, input: unknown = { release: '1.2.3' }) =>
    h.bus.request(IntakeCommands.activate, {
      workspaceId: h.workspaceId,
      actor: h.actor,
      deploymentId: deployment,
      source: 'manual',
      dedupeKey,
      input: input as never,
    });

  beforeEach(async () => {
    deploymentId = (await deploy()).id;
  });

  it('admits an activation as a run pinned to the deployed version, atomically with its first event', async () => {
    const sut = await activate(deploymentId, 'k1');

    expect(sut).toMatchObject({ deploymentId, state: 'queued', hold: null, duplicate: false });
    const events = await h.store.readStream(runStreamId(sut.runId));
    expect(events.map((e) => e.type)).toEqual(['run.admitted']);
    const data = events[0]!.data as { version: number; digest: string; activation: { dedupeKey: string; input: unknown } };
    const deployment = await h.bus.request(IntakeCommands.getDeployment, { workspaceId: h.workspaceId, deploymentId });
    expect(data.version).toBe(deployment.version);
    expect(data.digest).toBe(deployment.digest);
    expect(data.activation).toMatchObject({ dedupeKey: 'k1', input: { release: '1.2.3' } });
  });

  it('returns the existing run when the same activation arrives twice, even concurrently', async () => {
    const [first, second, third] = await Promise.all([activate(deploymentId, 'same'), activate(deploymentId, 'same'), activate(deploymentId, 'same')]);

    expect(new Set([first.runId, second.runId, third.runId]).size).toBe(1);
    expect([first, second, third].filter((r) => !r.duplicate)).toHaveLength(1);
    const runs = await h.bus.request(IntakeCommands.listRuns, { workspaceId: h.workspaceId, deploymentId });
    expect(runs.items).toHaveLength(1);
  });

  it('holds runs beyond the concurrency limit and admits the next one in order when a slot frees', async () => {
    const a = await activate(deploymentId, 'a');
    const b = await activate(deploymentId, 'b');
    const c = await activate(deploymentId, 'c');
    const d = await activate(deploymentId, 'd');
    expect([a.hold, b.hold, c.hold, d.hold]).toEqual([null, null, 'concurrency_limit', 'concurrency_limit']);

    const stopped = await h.bus.request(IntakeCommands.stopRun, { workspaceId: h.workspaceId, actor: h.actor, runId: a.runId });

    expect(stopped.state).toBe('cancelled');
    const [runC, runD] = await Promise.all([c, d].map((r) => h.bus.request(IntakeCommands.getRun, { workspaceId: h.workspaceId, runId: r.runId })));
    expect([runC!.hold, runD!.hold]).toEqual([null, 'concurrency_limit']);
    expect((await h.store.readStream(runStreamId(c.runId))).map((e) => e.type)).toEqual(['run.deferred', 'run.admitted']);
    expect((await h.store.readStream(runStreamId(a.runId))).map((e) => e.type)).toEqual(['run.admitted', 'run.cancelled']);
    const deployment = await h.bus.request(IntakeCommands.getDeployment, { workspaceId: h.workspaceId, deploymentId });
    expect([deployment.activeRuns, deployment.heldRuns]).toEqual([2, 1]);
  });

  it('defers activations while paused and admits them on resume; revoke refuses new ones with the reason', async () => {
    const control = (action: 'pause' | 'resume' | 'revoke', reason: string | null = null) =>
      h.bus.request(IntakeCommands.controlDeployment, { workspaceId: h.workspaceId, actor: h.actor, deploymentId, action, reason });
    await control('pause', 'release freeze');
    const deferred = await activate(deploymentId, 'while-paused');
    expect(deferred.hold).toBe('deployment_paused');

    const resumed = await control('resume');

    expect(resumed).toMatchObject({ status: 'active', activeRuns: 1, heldRuns: 0 });
    const run = await h.bus.request(IntakeCommands.getRun, { workspaceId: h.workspaceId, runId: deferred.runId });
    expect(run.hold).toBeNull();
    const admitted = await activate(deploymentId, 'x1');
    const held = await activate(deploymentId, 'x2');
    expect(held.hold).toBe('concurrency_limit');
    const revoked = await control('revoke', 'credentials leaked');
    expect(revoked.status).toBe('revoked');
    await expect(activate(deploymentId, 'after-revoke')).rejects.toMatchObject({
      code: 'deployment_revoked',
      message: expect.stringContaining('credentials leaked'),
    });
    // Admitted runs are the supervisor's to refuse; held ones can never start and end as revoked.
    expect((await h.bus.request(IntakeCommands.getRun, { workspaceId: h.workspaceId, runId: admitted.runId })).state).toBe('queued');
    expect((await h.bus.request(IntakeCommands.getRun, { workspaceId: h.workspaceId, runId: held.runId })).state).toBe('revoked');
    const events = await h.store.readStream(`deployment-${deploymentId}`);
    expect(events.map((e) => [e.type, e.actor.id])).toEqual([
      ['deployment.created', 'user-1'],
      ['deployment.paused', 'user-1'],
      ['deployment.resumed', 'user-1'],
      ['deployment.revoked', 'user-1'],
    ]);
  });

  it('stores a large input by reference and refuses one over the limit, writing nothing', async () => {
    const big = { blob: 'x'.repeat(20_000) };
    const byRef = await activate(deploymentId, 'big', big);
    const [admitted] = await h.store.readStream(runStreamId(byRef.runId));
    const activation = (admitted!.data as { activation: { input: unknown; inputRef: { bytes: number } } }).activation;
    expect(activation.input).toBeNull();
    expect(activation.inputRef.bytes).toBeGreaterThan(20_000);

    const error = await activate(deploymentId, 'huge', { blob: 'x'.repeat(300_000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteCommandError);
    expect(error).toMatchObject({ code: 'payload_too_large' });
    const runs = await h.bus.request(IntakeCommands.listRuns, { workspaceId: h.workspaceId, deploymentId });
    expect(runs.items.map((r) => r.id)).toEqual([byRef.runId]);
  });

  it('reads another workspace\'s deployment as not found', async () => {
    await expect(
      h.bus.request(IntakeCommands.activate, { workspaceId: 'ws_other', actor: h.actor, deploymentId, source: 'manual', dedupeKey: 'z' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
