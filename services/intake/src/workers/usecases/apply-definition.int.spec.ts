import { IntakeCommands } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { definition, startIntake, type IntakeHarness } from '../../testing/intake.testkit';
import { ApplyDefinitionUseCase } from './apply-definition';

// Real: Postgres (a database per suite), NATS request/reply, the event store. Nothing faked.
describe(ApplyDefinitionUseCase.name, () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await startIntake();
  });
  afterAll(() => h.close());

  const apply = (source: string) => h.bus.request(IntakeCommands.applyDefinition, { workspaceId: h.workspaceId, actor: h.actor, source, format: 'json' });
  const named = async (name: string) =>
    (await h.bus.request(IntakeCommands.listWorkers, { workspaceId: h.workspaceId, cursor: null, limit: 200 })).items.filter((worker) => worker.name === name);

  it('creates the worker and its first version together, then adds nothing for the same definition', async () => {
    const first = await apply(definition({ name: 'apply-first' }));
    const again = await apply(definition({ name: 'apply-first' }));

    expect(first).toMatchObject({ workerCreated: true, version: 1, created: true });
    expect(again).toEqual({ ...first, workerCreated: false, created: false });
    const [worker] = await named('apply-first');
    expect(worker).toMatchObject({ id: first.workerId, latestVersion: 1, description: 'Verifies release evidence.' });
    expect((await h.store.readStream(`worker-${first.workerId}`)).map((event) => event.type)).toEqual(['worker.created', 'worker.version_created']);
  });

  it('adds the next version to the worker of that name when the definition changed', async () => {
    const first = await apply(definition({ name: 'apply-next' }));

    const next = await apply(definition({ name: 'apply-next', instructions: 'Check it twice.' }));

    expect(next).toMatchObject({ workerId: first.workerId, workerCreated: false, version: 2, created: true });
  });

  it('creates no worker when the definition is refused', async () => {
    const refused = await apply(definition({ name: 'apply-refused', tools: [{ tool: 'http_fetch', verbs: ['GET'], resources: ['*'] }] })).catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(RemoteCommandError);
    expect((refused as RemoteCommandError).issues.map((issue) => issue.path)).toContain('tools[0].resources[0]');
    expect(await named('apply-refused')).toEqual([]);
  });

  it('gives racing applies of a new name one worker and one version', async () => {
    const answers = await Promise.all([1, 2, 3].map(() => apply(definition({ name: 'apply-raced' }))));

    expect(new Set(answers.map((answer) => answer.workerId)).size).toBe(1);
    expect(answers.filter((answer) => answer.workerCreated)).toHaveLength(1);
    expect(answers.every((answer) => answer.version === 1)).toBe(true);
    expect(await named('apply-raced')).toHaveLength(1);
  });
});
