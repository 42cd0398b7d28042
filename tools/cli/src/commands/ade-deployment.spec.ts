import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';

// Answers shaped as IntakeCommands.getDeployment, .listRuns and .controlDeployment reply through
// the door: these tests cover the requests the commands build, what they print and their exit codes.

const DOOR = '/api/v1/packetade/deployments';
const TOKEN = `pade_${'a'.repeat(20)}_${'s'.repeat(43)}`;

function view(fields: Record<string, unknown> = {}) {
  return {
    id: 'dep_1',
    workerId: 'wk_1',
    workerName: 'release-audit',
    version: 2,
    digest: 'v'.repeat(64),
    effectiveDigest: 'e'.repeat(64),
    overrides: {},
    status: 'active',
    statusReason: null,
    maxConcurrentRuns: 4,
    activeRuns: 1,
    heldRuns: 0,
    triggers: [],
    createdAt: '2026-03-01T10:00:00.000Z',
    updatedAt: '2026-03-01T10:00:00.000Z',
    ...fields,
  };
}

describe('packetagent ade deployment', () => {
  let api: CliApi;
  const sut = (argv: string[]) => api.cli(['ade', 'deployment', ...argv], {}, { PACKETAGENT_ADE_TOKEN: TOKEN });

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, code: 'deployment_not_found', detail: 'no deployment dep_x of this actor' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
  });

  it("prints a deployment's status, version and runs, and a page of its runs with the cursor of the next", async () => {
    api.json('GET', `${DOOR}/dep_1`, 200, view({ status: 'paused', statusReason: 'release freeze', heldRuns: 2 }));
    api.json('GET', `${DOOR}/dep_1/runs?limit=1`, 200, {
      items: [{ id: 'run_2', deploymentId: 'dep_1', version: 2, state: 'queued', hold: 'deployment_paused', createdAt: '2026-03-01T11:00:00.000Z' }],
      nextCursor: 'c2',
    });

    const got = await sut(['get', 'dep_1']);
    const runs = await sut(['runs', 'dep_1', '--limit', '1']);

    expect(got).toEqual({
      code: ExitCode.ok,
      stdout: ['deployment dep_1  paused (release freeze)', `worker release-audit (wk_1) version 2 digest ${'v'.repeat(64)}`, 'runs: 1 active, 2 held, at most 4 at once', ''].join('\n'),
      stderr: '',
    });
    expect(runs.stdout).toBe('run_2  queued (held: deployment_paused)  version 2  2026-03-01T11:00:00.000Z\nmore: --cursor c2\n');
  });

  it('rolls back to a version with a reason and shows a webhook secret the rollback made, once', async () => {
    api.json('POST', `${DOOR}/dep_1/rollback`, 200, view({ version: 1, webhooks: [{ triggerId: 'trg_9', secret: 'whsec_new' }] }));

    const answer = await sut(['rollback', 'dep_1', '--version', '1', '--reason', 'bad release']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ version: 1, reason: 'bad release' });
    expect(answer.stdout).toContain('  secret: whsec_new  (shown once: store it now)\n');
  });

  it("exits 1 for a deployment that is not the actor's, naming the code", async () => {
    const answer = await sut(['pause', 'dep_x', '--reason', 'freeze']);

    expect(answer).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: deployment_not_found: no deployment dep_x of this actor\n' });
    expect(api.seen.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([`POST ${DOOR}/dep_x/pause {"reason":"freeze"}`]);
  });
});
