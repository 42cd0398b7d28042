import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { migrateDeploymentRuns, migrateRun } from './migrate';

// Answers recorded from the API's documented shapes (MigrationCommands in libs/contracts): these
// tests cover the requests the commands build, what they print and their exit codes.

const RUN = '0193a000-0000-7000-8000-0000000000cc';
const OTHER = '0193a000-0000-7000-8000-0000000000dd';
const DEPLOYMENT = 'dep_0193a000';
const WORKSPACE = '/api/v1/workspaces/ws_demo';

const from = { version: 2, digest: 'a1'.repeat(32), effectiveDigest: 'b2'.repeat(32) };
const to = { version: 3, digest: 'c3'.repeat(32), effectiveDigest: 'd4'.repeat(32) };
const divergence = { streamVersion: 7, globalPosition: 412, eventType: 'run.tool_decided', recorded: 'allow http_fetch GET', proposed: 'approval_required http_fetch GET' };
const result = (runId: string, outcome: string, extra: Record<string, unknown> = {}) => ({ runId, outcome, from, to, decisionsCompared: 5, divergence: null, refusal: null, ...extra });

describe('run migrate and deployment migrate-runs', () => {
  let api: CliApi;
  const sut = (argv: string[]) => api.cli(argv);

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
  });

  it(`${migrateRun.name} posts the version to /migrate and prints the outcome, both pins and the decisions compared`, async () => {
    api.reply = { status: 200, body: result(RUN, 'migrated') };

    const answer = await sut(['run', 'migrate', RUN, '--version', '3']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen).toEqual([{ method: 'POST', url: `${WORKSPACE}/runs/${RUN}/migrate`, body: '{"version":3,"dryRun":false}' }]);
    expect(answer.stdout).toBe(
      [
        `run ${RUN}: migrated`,
        'from: version 2  digest a1a1a1a1a1a1  effective b2b2b2b2b2b2',
        'to:   version 3  digest c3c3c3c3c3c3  effective d4d4d4d4d4d4',
        'decisions compared: 5',
        '',
      ].join('\n'),
    );
  });

  it(`${migrateRun.name} sends a dry run with --dry-run and says nothing moved`, async () => {
    api.reply = { status: 200, body: result(RUN, 'would_migrate') };

    const answer = await sut(['run', 'migrate', RUN, '--version', '3', '--dry-run']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ version: 3, dryRun: true });
    expect(answer.stdout.split('\n')[0]).toBe(`run ${RUN}: would migrate (dry run: nothing moved)`);
  });

  it(`${migrateRun.name} prints the first divergence, recorded against proposed, and exits 1 when refused`, async () => {
    api.reply = { status: 200, body: result(RUN, 'refused', { decisionsCompared: 2, divergence }) };

    const answer = await sut(['run', 'migrate', RUN, '--version', '3']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stdout).toBe(
      [
        `run ${RUN}: refused`,
        'from: version 2  digest a1a1a1a1a1a1  effective b2b2b2b2b2b2',
        'to:   version 3  digest c3c3c3c3c3c3  effective d4d4d4d4d4d4',
        'decisions compared: 2',
        'first divergence at event 7 (run.tool_decided, position 412):',
        '  recorded: allow http_fetch GET',
        '  proposed: approval_required http_fetch GET',
        '',
      ].join('\n'),
    );
    expect(answer.stderr).toBe(`error: run ${RUN} was not migrated\n`);
  });

  it(`${migrateRun.name} prints a refusal without a comparison, and the whole result with --json`, async () => {
    api.reply = { status: 200, body: result(RUN, 'refused', { decisionsCompared: 0, refusal: 'already on version 3' }) };

    const human = await sut(['run', 'migrate', RUN, '--version', '3']);
    expect(human.code).toBe(ExitCode.failure);
    expect(human.stdout).toContain('refusal: already on version 3\n');
    expect(human.stdout).not.toContain('divergence');

    const machine = await sut(['--json', 'run', 'migrate', RUN, '--version', '3']);
    expect(machine.code).toBe(ExitCode.failure);
    expect(JSON.parse(machine.stdout)).toEqual(api.reply.body);
  });

  it(`${migrateRun.name} needs a positive integer --version and sends nothing without one`, async () => {
    for (const argv of [['run', 'migrate', RUN], ['run', 'migrate', RUN, '--version', '2.5'], ['run', 'migrate', RUN, '--version', '0']]) {
      const answer = await sut(argv);
      expect(answer.code).toBe(ExitCode.failure);
      expect(answer.stderr).toMatch(/--version/);
    }
    expect(api.seen).toEqual([]);
  });

  it(`${migrateRun.name} exits 1 with the problem for a run that is not waiting, and 3 without deployment-control`, async () => {
    api.reply = { status: 409, body: { type: 'urn:packetagent:problem:run_not_waiting', title: 'Conflict', status: 409, detail: `run ${RUN} is running, not waiting`, code: 'run_not_waiting' } };
    const conflict = await sut(['run', 'migrate', RUN, '--version', '3']);
    expect(conflict.code).toBe(ExitCode.failure);
    expect(conflict.stderr).toBe(`error: Conflict: run ${RUN} is running, not waiting\n`);

    api.reply = { status: 403, body: { type: 'urn:packetagent:problem:permission_denied', title: 'Forbidden', status: 403, detail: 'this needs the deployment-control permission', code: 'permission_denied' } };
    const refused = await sut(['run', 'migrate', RUN, '--version', '3']);
    expect(refused.code).toBe(ExitCode.auth);
  });

  it(`${migrateDeploymentRuns.name} compares without moving unless --apply, one line per run`, async () => {
    api.reply = { status: 200, body: { deploymentId: DEPLOYMENT, results: [result(RUN, 'would_migrate'), result(OTHER, 'refused', { decisionsCompared: 2, divergence })] } };

    const answer = await sut(['deployment', 'migrate-runs', DEPLOYMENT, '--version', '3']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen).toEqual([{ method: 'POST', url: `${WORKSPACE}/deployments/${DEPLOYMENT}/migrate-runs`, body: '{"version":3,"dryRun":true}' }]);
    expect(answer.stdout).toBe(
      [
        `deployment ${DEPLOYMENT}: dry run, nothing moved: 1 would migrate, 1 refused`,
        `${RUN}  would_migrate  v2 -> v3  5 decisions compared`,
        `${OTHER}  refused  v2 -> v3  2 decisions compared  diverged at event 7 (run.tool_decided): recorded allow http_fetch GET, proposed approval_required http_fetch GET`,
        '',
      ].join('\n'),
    );
  });

  it(`${migrateDeploymentRuns.name} moves the runs with --apply and says so when none is waiting`, async () => {
    api.reply = { status: 200, body: { deploymentId: DEPLOYMENT, results: [result(RUN, 'migrated')] } };
    const applied = await sut(['deployment', 'migrate-runs', DEPLOYMENT, '--version', '3', '--apply']);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ version: 3, dryRun: false });
    expect(applied.stdout).toBe(`deployment ${DEPLOYMENT}: 1 migrated, 0 refused\n${RUN}  migrated  v2 -> v3  5 decisions compared\n`);

    api.reply = { status: 200, body: { deploymentId: DEPLOYMENT, results: [] } };
    const empty = await sut(['deployment', 'migrate-runs', DEPLOYMENT, '--version', '3']);
    expect(empty.code).toBe(ExitCode.ok);
    expect(empty.stdout).toBe(`deployment ${DEPLOYMENT}: no waiting runs\n`);
  });
});
