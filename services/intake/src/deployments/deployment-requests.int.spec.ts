import { IntakeCommands } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { definition, startIntake, type IntakeHarness } from '../testing/intake.testkit';

describe('deployment request keys and updates', () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await startIntake();
  });
  afterAll(() => h.close());

  async function worker(name = `w-${Math.random().toString(36).slice(2, 8)}`) {
    const { id: workerId } = await h.bus.request(IntakeCommands.createWorker, { workspaceId: h.workspaceId, actor: h.actor, name });
    const version = (instructions: string) =>
      h.bus.request(IntakeCommands.createVersion, { workspaceId: h.workspaceId, actor: h.actor, workerId, source: definition({ name, instructions }), format: 'json' });
    return { workerId, version };
  }

  const create = (workerId: string, requestKey: string | null, version: number | null = null) =>
    h.bus.request(IntakeCommands.createDeployment, { workspaceId: h.workspaceId, actor: h.actor, workerId, version, requestKey });

  const deploymentsOf = async (workerId: string) =>
    (await h.bus.request(IntakeCommands.listDeployments, { workspaceId: h.workspaceId, workerId })).items;

  it('creates one deployment for one request key, even when the requests race', async () => {
    const { workerId, version } = await worker();
    await version('first');

    const answers = await Promise.all([create(workerId, 'key-1'), create(workerId, 'key-1'), create(workerId, 'key-1')]);

    expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
    expect(answers.filter((answer) => answer.created)).toHaveLength(1);
    // Webhook secrets are shown once: only to the request that created the trigger.
    expect(answers.filter((answer) => answer.webhooks.length > 0)).toHaveLength(1);
    expect(await deploymentsOf(workerId)).toHaveLength(1);
  });

  it('answers the same deployment for its key after the deployment moved to a newer version', async () => {
    const { workerId, version } = await worker();
    await version('first');
    const first = await create(workerId, 'key-2', 1);
    await version('second');
    await h.bus.request(IntakeCommands.controlDeployment, { workspaceId: h.workspaceId, actor: h.actor, deploymentId: first.id, action: 'update', version: 2 });

    const again = await create(workerId, 'key-2', 1);

    expect(again).toMatchObject({ id: first.id, created: false, version: 2 });
  });

  it('refuses a request key reused for another version, creating nothing', async () => {
    const { workerId, version } = await worker();
    await version('first');
    await create(workerId, 'key-3', 1);
    await version('second');

    const refusal = await create(workerId, 'key-3', 2).catch((error: unknown) => error);

    expect(refusal).toBeInstanceOf(RemoteCommandError);
    expect((refusal as RemoteCommandError).code).toBe('idempotency_key_conflict');
    expect(await deploymentsOf(workerId)).toHaveLength(1);
  });

  it('keeps deployments without a key independent', async () => {
    const { workerId, version } = await worker();
    await version('first');

    const [a, b] = [await create(workerId, null), await create(workerId, null)];

    expect(a.id).not.toBe(b.id);
    expect([a.created, b.created]).toEqual([true, true]);
  });

  it('updates a deployment to a newer version once, refuses an older one, and records deployment.updated', async () => {
    const { workerId, version } = await worker();
    await version('first');
    const deployment = await create(workerId, null);
    await version('second');
    const update = (target: number) =>
      h.bus.request(IntakeCommands.controlDeployment, { workspaceId: h.workspaceId, actor: h.actor, deploymentId: deployment.id, action: 'update', version: target });

    const updated = await update(2);
    const repeated = await update(2);
    const older = await update(1).catch((error: unknown) => error);

    expect(updated.version).toBe(2);
    expect(repeated.version).toBe(2);
    expect((older as RemoteCommandError).code).toBe('invalid_transition');
    const events = await h.store.readStream(`deployment-${deployment.id}`);
    expect(events.map((event) => event.type)).toEqual(['deployment.created', 'deployment.updated']);
    expect(events[1]!.data).toMatchObject({ fromVersion: 1, version: 2 });
  });
});
