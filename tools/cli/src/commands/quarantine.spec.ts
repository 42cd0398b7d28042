import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { endRun, releaseRun } from './quarantine';

// Answers recorded from the API's documented shapes (SupervisorCommands in libs/contracts): these
// tests cover the requests the commands build, what they print and their exit codes.

const RUN = '0193a000-0000-7000-8000-0000000000bb';
const BASE = `/api/v1/workspaces/ws_demo/runs/${RUN}`;

describe('run release and run end', () => {
  let api: CliApi;
  const sut = (argv: string[]) => api.cli(argv);

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
  });

  const supervision = { runId: RUN, waitingOn: null, claims: 2, updatedAt: '2026-03-01T12:00:00.000Z' };

  it(`${releaseRun.name} posts to /release and says the run is still quarantined, with the reason`, async () => {
    api.reply = { status: 200, body: { ...supervision, status: 'quarantined', quarantineReason: 'event at version 3 does not match its digest', outcome: 'quarantined' } };

    const result = await sut(['run', 'release', RUN]);

    expect(result.code).toBe(ExitCode.ok);
    expect(api.seen).toEqual([{ method: 'POST', url: `${BASE}/release`, body: '{}' }]);
    expect(result.stdout).toBe(`run ${RUN}\nstill quarantined: its history still cannot be replayed\nreason: event at version 3 does not match its digest\n`);
  });

  it(`${releaseRun.name} says a released run goes on`, async () => {
    api.reply = { status: 200, body: { ...supervision, status: 'active', quarantineReason: null, outcome: 'resumed' } };

    const result = await sut(['run', 'release', RUN]);

    expect(result.stdout).toBe(`run ${RUN}\nreleased: its history replayed and the run goes on\n`);
  });

  it(`${endRun.name} posts the reason to /end and prints the version the run ended at`, async () => {
    api.reply = { status: 200, body: { ...supervision, status: 'terminal', quarantineReason: 'broken', endedAtVersion: 9 } };

    const result = await sut(['run', 'end', RUN, '--reason', 'history edited']);

    expect(result.code).toBe(ExitCode.ok);
    expect(api.seen).toEqual([{ method: 'POST', url: `${BASE}/end`, body: '{"reason":"history edited"}' }]);
    expect(result.stdout).toBe(`run ${RUN}\nended: abandoned (quarantined) at stream version 9\n`);
  });

  it(`${endRun.name} needs --reason and sends nothing without it`, async () => {
    const result = await sut(['run', 'end', RUN]);

    expect(result.code).toBe(ExitCode.failure);
    expect(result.stderr).toContain("required option '--reason <text>' not specified");
    expect(api.seen).toEqual([]);
  });

  it('exits 3 when the key lacks run-recovery, and 1 with the problem when the run is not quarantined', async () => {
    api.reply = { status: 403, body: { type: 'urn:packetagent:problem:permission_denied', title: 'Forbidden', status: 403, detail: 'this needs the run-recovery permission', code: 'permission_denied' } };
    const refused = await sut(['run', 'release', RUN]);
    expect(refused.code).toBe(ExitCode.auth);

    api.reply = { status: 409, body: { type: 'urn:packetagent:problem:run_not_quarantined', title: 'Conflict', status: 409, detail: `run ${RUN} is active, not quarantined`, code: 'run_not_quarantined' } };
    const conflict = await sut(['run', 'end', RUN, '--reason', 'x']);
    expect(conflict.code).toBe(ExitCode.failure);
    expect(conflict.stderr).toContain('not quarantined');
  });
});
