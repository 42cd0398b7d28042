import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvidenceBundle, computeEventDigest, newEventId, runStreamId, type EventEnvelope, type JsonValue } from '@packetagent/contracts';
import { runCli, type CliIo } from '../cli';
import { ExitCode } from '../errors';
import { auditVerifyBundle } from './audit';

const RUN = '0193a000-0000-7000-8000-0000000000aa';

function runStream(count: number): EventEnvelope[] {
  let prevDigest: string | null = null;
  return Array.from({ length: count }, (_, index) => {
    const body = {
      id: newEventId(), type: 'run.resumed', schemaVersion: 1, stream: runStreamId(RUN), streamVersion: index + 1, workspaceId: 'ws1',
      occurredAt: '2026-01-01T00:00:00.000Z', causationId: null, correlationId: null, traceparent: null,
      actor: { kind: 'system' as const, id: 'test' }, data: { reason: `step ${index}` } as JsonValue, prevDigest,
    };
    const digest = computeEventDigest(body);
    prevDigest = digest;
    return { ...body, globalPosition: 10 + index, digest };
  });
}

function io(cwd: string, env: NodeJS.ProcessEnv = {}) {
  const out = { stdout: '', stderr: '' };
  const value: CliIo = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), env, cwd, readStdin: async () => '' };
  return { io: value, out };
}

describe(auditVerifyBundle.name, () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'pa-audit-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const bundle = () => buildEvidenceBundle({ runId: RUN, workspaceId: 'ws1', exportedAt: new Date('2026-01-02T00:00:00Z'), run: runStream(3), policy: [], attention: [] });

  it('exits 0 and prints the bundle digest when the bundle verifies, without any API key', async () => {
    const sealed = bundle();
    writeFileSync(join(dir, 'good.json'), JSON.stringify(sealed));
    const { io: sut, out } = io(dir);

    const code = await runCli(['audit', 'verify-bundle', 'good.json'], sut);

    expect(code).toBe(ExitCode.ok);
    expect(out.stdout).toContain(`ok: run ${RUN}: 1 streams, 3 events, 0 checkpoints checked`);
    expect(out.stdout).toContain(sealed.bundleDigest);
  });

  it('exits 1 and lists each break by stream, version and position when an event was edited', async () => {
    const edited = bundle();
    edited.streams[0]!.events[1]!.data = { reason: 'rewritten' };
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(edited));
    const { io: sut, out } = io(dir);

    const code = await runCli(['audit', 'verify-bundle', 'edited.json'], sut);

    expect(code).toBe(ExitCode.failure);
    expect(out.stdout).toContain(`  run-${RUN}\n    v2 @11 digest_mismatch: content does not match its digest`);
    expect(out.stdout).toContain('  (bundle)\n    bundle_digest_mismatch');
    expect(out.stderr).toBe('error: edited.json does not verify: 2 breaks\n');
  });

  it('prints the full result as JSON with --json', async () => {
    writeFileSync(join(dir, 'json.json'), JSON.stringify(bundle()));
    const { io: sut, out } = io(dir);

    const code = await runCli(['--json', 'audit', 'verify-bundle', 'json.json'], sut);

    expect(code).toBe(ExitCode.ok);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: true, runId: RUN, eventsChecked: 3, breaks: [] });
  });

  it('refuses a file that is not JSON', async () => {
    writeFileSync(join(dir, 'bad.json'), 'not json');
    const { io: sut, out } = io(dir);

    expect(await runCli(['audit', 'verify-bundle', 'bad.json'], sut)).toBe(ExitCode.failure);
    expect(out.stderr).toBe('error: bad.json is not JSON\n');
  });
});

describe('packetagent audit verify', () => {
  let server: Server;
  let report: unknown;
  let url = '';
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(report));
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const env = () => ({ PACKETAGENT_API_URL: url, PACKETAGENT_API_KEY: 'pa_key_secret', PACKETAGENT_WORKSPACE: 'ws1' });

  it('exits 0 on a clean report', async () => {
    report = { ok: true, streamsChecked: 4, eventsChecked: 20, breaks: [] };
    const { io: sut, out } = io(tmpdir(), env());

    expect(await runCli(['audit', 'verify'], sut)).toBe(ExitCode.ok);
    expect(out.stdout).toBe('ok: 4 streams, 20 events checked\n');
    expect(seen.pop()).toBe('GET /api/v1/workspaces/ws1/audit/verify Bearer pa_key_secret');
  });

  it('exits 1 and prints breaks grouped by stream with version and position', async () => {
    report = {
      ok: false,
      streamsChecked: 4,
      eventsChecked: 20,
      breaks: [
        { stream: 'run-a', streamVersion: 3, globalPosition: 17, reason: 'digest_mismatch', detail: 'content does not match its digest' },
        { stream: 'run-a', streamVersion: 4, globalPosition: 18, reason: 'prev_digest_mismatch', detail: 'links to x, previous is y' },
      ],
    };
    const { io: sut, out } = io(tmpdir(), env());

    expect(await runCli(['audit', 'verify'], sut)).toBe(ExitCode.failure);
    expect(out.stdout).toBe(
      '2 breaks in 4 streams, 20 events checked:\n  run-a\n    v3 @17 digest_mismatch: content does not match its digest\n    v4 @18 prev_digest_mismatch: links to x, previous is y\n',
    );
    expect(out.stderr).toBe('error: the event store does not verify: 2 breaks\n');
  });
});
