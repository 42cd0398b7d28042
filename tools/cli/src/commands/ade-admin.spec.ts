import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTOR_OPERATIONS } from '@packetagent/contracts';
import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { parseLifetime, parseOperations, tokenLine, tokenState } from './ade-admin';

// Answers shaped as the gateway's PacketADE admin routes return them (actor-tokens.dto.ts and
// trust.dto.ts): these tests cover the requests the commands build, what they print and their exit codes.

const ADMIN = '/api/v1/workspaces/ws_demo/packetade';
const TOKEN = `pade_${'a'.repeat(20)}_${'s'.repeat(43)}`;
const DAY_MS = 86_400_000;

function listed(fields: Record<string, unknown> = {}) {
  return {
    id: 'a'.repeat(20),
    actorName: 'ide',
    operations: ['deploy', 'events'],
    prefix: `pade_${'a'.repeat(20)}_`,
    createdAt: '2026-03-01T10:00:00.000Z',
    expiresAt: '2026-04-01T10:00:00.000Z',
    revokedAt: null,
    lastUsedAt: null,
    ...fields,
  };
}

describe('packetagent ade actor | publisher | acknowledge', () => {
  let api: CliApi;
  let dir: string;
  const pem = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
    dir = mkdtempSync(join(tmpdir(), 'pa-ade-admin-'));
    writeFileSync(join(dir, 'publisher.pub'), pem);
  });
  afterAll(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    api.seen.length = 0;
    api.authorizations.length = 0;
    api.routes = {};
  });

  it('issues a token with the API key: the operations, an expiry that far from now, and the token printed with the warning that it is shown once', async () => {
    const issued = { id: 'a'.repeat(20), token: TOKEN, actorName: 'ide', operations: ['validate', 'deploy', 'events'], expiresAt: '2026-03-31T10:00:00.000Z' };
    api.json('POST', `${ADMIN}/actors`, 201, issued);

    const before = Date.now();
    const answer = await api.cli(['ade', 'actor', 'issue', 'ide', '--operations', 'validate, deploy,events,deploy', '--expires-in', '30d']);
    const after = Date.now();

    expect(answer.code).toBe(ExitCode.ok);
    const body = JSON.parse(api.seen[0]!.body) as { actorName: string; operations: string[]; expiresAt: string };
    expect(body).toEqual({ actorName: 'ide', operations: ['validate', 'deploy', 'events'], expiresAt: expect.any(String) });
    expect(Date.parse(body.expiresAt)).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(Date.parse(body.expiresAt)).toBeLessThanOrEqual(after + 30 * DAY_MS);
    expect(api.authorizations).toEqual(['Bearer pa_key1_secret']);
    expect(answer.stdout.split('\n')).toEqual([
      `actor token ${'a'.repeat(20)} for ide, expires 2026-03-31T10:00:00.000Z`,
      'operations: validate, deploy, events',
      `token: ${TOKEN}  (shown once: store it now, and give it to the client as PACKETAGENT_ADE_TOKEN)`,
      '',
    ]);
  });

  it('refuses an unknown operation and a lifetime it cannot read, before sending anything', async () => {
    const operation = await api.cli(['ade', 'actor', 'issue', 'ide', '--operations', 'deploy,launch', '--expires-in', '30d']);
    const lifetime = await api.cli(['ade', 'actor', 'issue', 'ide', '--operations', 'all', '--expires-in', '1 month']);

    expect(operation.code).toBe(ExitCode.failure);
    expect(operation.stderr).toMatch(/unknown: launch; a comma-separated list of validate, deploy/);
    expect(lifetime.code).toBe(ExitCode.failure);
    expect(lifetime.stderr).toMatch(/e\.g\. 30d, 12h or 90m/);
    expect(api.seen).toEqual([]);
  });

  it('lists tokens with their state and never a token, and revokes one by id', async () => {
    api.json('GET', `${ADMIN}/actors`, 200, { items: [listed(), listed({ id: 'b'.repeat(20), actorName: 'ci', revokedAt: '2026-03-02T10:00:00.000Z', lastUsedAt: '2026-03-02T09:00:00.000Z' })] });
    api.routes[`DELETE ${ADMIN}/actors/${'b'.repeat(20)}`] = { status: 204, body: '' };

    const list = await api.cli(['ade', 'actor', 'list']);
    const revoke = await api.cli(['ade', 'actor', 'revoke', 'b'.repeat(20)]);

    expect(list.code).toBe(ExitCode.ok);
    expect(list.stdout.split('\n')[1]).toBe(`${'b'.repeat(20)}  ci  revoked  expires 2026-04-01T10:00:00.000Z  last used 2026-03-02T09:00:00.000Z  deploy,events`);
    expect(list.stdout).not.toContain('pade_');
    expect(revoke).toEqual({ code: ExitCode.ok, stdout: `actor token ${'b'.repeat(20)} revoked\n`, stderr: '' });
  });

  it('trusts a publisher from its PEM file and acknowledges one package signed by another key', async () => {
    api.json('POST', `${ADMIN}/publishers`, 201, { fingerprint: `SHA256:${'f'.repeat(64)}`, name: 'PacketADE build', createdAt: '2026-03-01T10:00:00.000Z' });
    api.routes[`POST ${ADMIN}/acknowledgements`] = { status: 204, body: '' };

    const trusted = await api.cli(['ade', 'publisher', 'trust', 'PacketADE build', join(dir, 'publisher.pub')]);
    const acknowledged = await api.cli(['ade', 'acknowledge', 'd'.repeat(64), `SHA256:${'e'.repeat(64)}`, '--note', 'reviewed by ops']);

    expect(trusted).toEqual({ code: ExitCode.ok, stdout: `trusted publisher PacketADE build: SHA256:${'f'.repeat(64)}\n`, stderr: '' });
    expect(acknowledged).toEqual({ code: ExitCode.ok, stdout: `acknowledged package ${'d'.repeat(64)} signed by SHA256:${'e'.repeat(64)}\n`, stderr: '' });
    expect(api.seen.map((request) => JSON.parse(request.body) as unknown)).toEqual([
      { name: 'PacketADE build', publicKey: pem },
      { packageDigest: 'd'.repeat(64), keyId: `SHA256:${'e'.repeat(64)}`, note: 'reviewed by ops' },
    ]);
  });

  it('exits 3 when the key lacks the admin role', async () => {
    api.json('GET', `${ADMIN}/actors`, 403, { title: 'Forbidden', status: 403, code: 'permission_denied', detail: 'this needs the admin role' });

    const answer = await api.cli(['ade', 'actor', 'list']);

    expect(answer.code).toBe(ExitCode.auth);
    expect(answer.stderr).toBe('error: Forbidden: this needs the admin role\n');
  });
});

describe(parseLifetime.name, () => {
  it('reads days, hours and minutes', () => {
    expect([parseLifetime('30d'), parseLifetime('12h'), parseLifetime('90m')]).toEqual([30 * DAY_MS, 12 * 3_600_000, 90 * 60_000]);
    for (const value of ['0d', '30', '1.5d', '2w', '-1d']) expect(() => parseLifetime(value)).toThrow(/whole number of days/);
  });
});

describe(parseOperations.name, () => {
  it('takes all for every operation, and keeps the order given without repeats', () => {
    expect(parseOperations('all')).toEqual([...ACTOR_OPERATIONS]);
    expect(parseOperations('events,deploy,events')).toEqual(['events', 'deploy']);
    expect(() => parseOperations(',')).toThrow(/comma-separated list/);
  });
});

describe(tokenState.name, () => {
  it('is revoked before expired, and expired at the expiry instant', () => {
    const now = Date.parse('2026-04-01T10:00:00.000Z');
    expect(tokenState({ revokedAt: '2026-03-02T00:00:00.000Z', expiresAt: '2026-03-01T00:00:00.000Z' }, now)).toBe('revoked');
    expect(tokenState({ revokedAt: null, expiresAt: '2026-04-01T10:00:00.000Z' }, now)).toBe('expired');
    expect(tokenLine(listed(), now - 1)).toBe(`${'a'.repeat(20)}  ide  active  expires 2026-04-01T10:00:00.000Z  last used never  deploy,events`);
  });
});
