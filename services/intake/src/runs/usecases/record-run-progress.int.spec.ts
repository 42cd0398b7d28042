import { IntakeCommands, runStreamId, type RunView } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { definition, startIntake, type IntakeHarness } from '../../testing/intake.testkit';
import { RecordRunProgressUseCase } from './record-run-progress';

const SUPERVISOR = { kind: 'service', id: 'supervisor' } as const;

describe(RecordRunProgressUseCase.name, () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await startIntake({ relay: true });
  });
  afterAll(() => h.close());

  /** A worker with two versions, deployed at the first; answers the second version's pin. */
  async function deployFirstOfTwo() {
    const name = `w-${Math.random().toString(36).slice(2, 8)}`;
    const { id: workerId } = await h.bus.request(IntakeCommands.createWorker, { workspaceId: h.workspaceId, actor: h.actor, name });
    const create = (instructions: string) =>
      h.bus.request(IntakeCommands.createVersion, { workspaceId: h.workspaceId, actor: h.actor, workerId, source: definition({ name, instructions }), format: 'json' });
    const first = await create('Check every release item has evidence.');
    const second = await create('Check every release item has evidence, twice.');
    const deployment = await h.bus.request(IntakeCommands.createDeployment, { workspaceId: h.workspaceId, actor: h.actor, workerId, version: first.version });
    return { deploymentId: deployment.id, first, second };
  }

  const getRun = (runId: string) => h.bus.request(IntakeCommands.getRun, { workspaceId: h.workspaceId, runId });

  async function migrate(runId: string, from: { version: number; digest: string }, to: { version: number; digest: string }) {
    const stream = runStreamId(runId);
    const head = (await h.store.readStream(stream)).at(-1)!;
    const pin = (ref: { version: number; digest: string }) => ({ ...ref, effectiveDigest: ref.digest });
    return h.store.append(stream, head.streamVersion, [{ type: 'run.migrated', data: { from: pin(from), to: pin(to), decisionsCompared: 3, by: h.actor }, actor: SUPERVISOR }], {
      workspaceId: h.workspaceId,
    });
  }

  it('shows the version a run migrated to, and a redelivered earlier migration changes nothing', async () => {
    const { deploymentId, first, second } = await deployFirstOfTwo();
    const { runId } = await h.bus.request(IntakeCommands.activate, { workspaceId: h.workspaceId, actor: h.actor, deploymentId, source: 'manual', dedupeKey: 'm1' });
    expect(await getRun(runId)).toMatchObject({ version: first.version, digest: first.digest });

    const moved = await migrate(runId, first, second);

    const after = await eventually(async () => {
      const run: RunView = await getRun(runId);
      return run.version === second.version && run;
    }, { what: 'intake to show the migrated version' });
    expect(after).toMatchObject({ version: second.version, digest: second.digest, state: 'queued' });

    await migrate(runId, second, first);
    await eventually(async () => (await getRun(runId)).version === first.version, { what: 'intake to show the run moved back' });

    // The first move again, as a redelivery would bring it: the run stays where its latest move put it.
    const firstMove = moved.events[0]!;
    await h.app.get(RecordRunProgressUseCase).execute({ ...firstMove, storedSchemaVersion: firstMove.schemaVersion });
    expect(await getRun(runId)).toMatchObject({ version: first.version, digest: first.digest });
  });

  it("changes nothing for another workspace's run of the same id", async () => {
    const { deploymentId, first, second } = await deployFirstOfTwo();
    const { runId } = await h.bus.request(IntakeCommands.activate, { workspaceId: h.workspaceId, actor: h.actor, deploymentId, source: 'manual', dedupeKey: 'm2' });
    const [admitted] = await h.store.readStream(runStreamId(runId));

    await h.app.get(RecordRunProgressUseCase).execute({
      ...admitted!,
      storedSchemaVersion: 1,
      type: 'run.migrated',
      workspaceId: 'ws_other',
      streamVersion: 2,
      data: { from: { ...first, effectiveDigest: first.digest }, to: { ...second, effectiveDigest: second.digest }, decisionsCompared: 1, by: h.actor },
    });

    expect(await getRun(runId)).toMatchObject({ version: first.version, digest: first.digest });
  });
});
