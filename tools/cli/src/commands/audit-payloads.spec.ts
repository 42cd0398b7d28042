import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvidenceBundle, computeEventDigest, newEventId, payloadContent, payloadRef, type EventEnvelope, type EvidenceBundle, type JsonValue } from '@packetagent/contracts';
import { runCli, type CliIo } from '../cli';
import { ExitCode } from '../errors';

const RUN = '0193a000-0000-7000-8000-0000000000bb';
const output = { body: 'o'.repeat(70_000) };
const content = payloadContent(output);

function bundle(): EvidenceBundle {
  let prevDigest: string | null = null;
  const run: EventEnvelope[] = [
    { type: 'run.admitted', data: {} },
    { type: 'run.tool_result', data: { callId: 'c1', tool: 'http_fetch', ok: true, output: payloadRef(content), summary: '200 OK', executed: true } },
  ].map(({ type, data }, index) => {
    const body = {
      id: newEventId(), type, schemaVersion: 1, stream: `run-${RUN}`, streamVersion: index + 1, workspaceId: 'ws1',
      occurredAt: '2026-01-01T00:00:00.000Z', causationId: null, correlationId: null, traceparent: null,
      actor: { kind: 'service' as const, id: 'supervisor' }, data: data as JsonValue, prevDigest,
    };
    const digest = computeEventDigest(body);
    prevDigest = digest;
    return { ...body, globalPosition: 10 + index, digest };
  });
  const payloads = [{ digest: content.digest, size: content.size, mediaType: 'application/json' as const, value: output }];
  return buildEvidenceBundle({ runId: RUN, workspaceId: 'ws1', exportedAt: new Date('2026-01-02T00:00:00Z'), run, policy: [], attention: [], payloads });
}

describe('packetagent audit verify-bundle with payloads', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'pa-audit-payloads-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function verify(name: string, value: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
    writeFileSync(join(dir, name), JSON.stringify(value));
    const out = { stdout: '', stderr: '' };
    const io: CliIo = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), env: {}, cwd: dir, readStdin: async () => '' };
    return { code: await runCli(['audit', 'verify-bundle', name], io), ...out };
  }

  it('checks the payloads a bundle carries and counts them', async () => {
    const sut = await verify('good.json', bundle());

    expect(sut.code).toBe(ExitCode.ok);
    expect(sut.stdout).toContain(`ok: run ${RUN}: 1 streams, 2 events, 0 checkpoints, 1 payload references checked`);
  });

  it('exits 1 and names the digest of a payload altered in the file', async () => {
    const altered = bundle();
    (altered.payloads![0]!.value as { body: string }).body = 'forged';

    const sut = await verify('altered.json', altered);

    expect(sut.code).toBe(ExitCode.failure);
    expect(sut.stdout).toContain(`  run-${RUN}\n    v2 @11 payload_mismatch: output references payload ${content.digest}, whose content in the bundle digests to `);
    expect(sut.stdout).toContain('bundle_digest_mismatch');
  });
});
