import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { AdeExitCode, type DeployReceipt, type ValidationReport } from './ade-door-client';
import { receiptLines } from './ade-deploy';
import { validationLines, validationOutcome } from './ade-validate';

// Answers shaped as the gateway's PacketADE door returns them (ValidationReport, DeployReceipt
// and the activation result in services/gateway/src/packetade/door): these tests cover the
// requests the commands build, what they print and their exit codes.

const DOOR = '/api/v1/packetade';
const TOKEN = `pade_${'a'.repeat(20)}_${'s'.repeat(43)}`;
const KEY = `SHA256:${'k'.repeat(64)}`;
const DIGEST = 'd'.repeat(64);

function report(fields: Partial<ValidationReport> = {}): ValidationReport {
  return {
    packageDigest: DIGEST,
    workerName: 'release-audit',
    signed: true,
    signatures: [{ keyId: KEY, trusted: true, acknowledged: false }],
    accepted: true,
    refusal: null,
    requires: { providers: ['anthropic'], tools: ['http_fetch', 'slack_post'], credentials: ['slack_release_channel'] },
    preflight: { ready: true, missing: [] },
    ...fields,
  };
}

function receipt(fields: Partial<DeployReceipt> = {}): DeployReceipt {
  return {
    packageDigest: DIGEST,
    workerId: 'wk_1',
    workerName: 'release-audit',
    version: 1,
    versionDigest: 'v'.repeat(64),
    deploymentId: 'dep_1',
    created: true,
    signedBy: [KEY],
    webhooks: [{ triggerId: 'trg_1', secret: 'whsec_once' }],
    ...fields,
  };
}

describe('packetagent ade validate | deploy | update | run', () => {
  let api: CliApi;
  let dir: string;
  // The file as a signing tool may write it: spacing and key order are the package's own business.
  const document = '{\n  "payloadType": "application/vnd.packetagent.worker-package+json",\n  "payload": "e30=",  "signatures": []\n}\n';
  const sut = (argv: string[], env: NodeJS.ProcessEnv = { PACKETAGENT_ADE_TOKEN: TOKEN }) => api.cli(argv, {}, env);

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
    dir = mkdtempSync(join(tmpdir(), 'pa-ade-door-'));
    writeFileSync(join(dir, 'pkg.dsse.json'), document);
    writeFileSync(join(dir, 'bom.json'), `\uFEFF${document}`);
    writeFileSync(join(dir, 'worker.yaml'), 'name: release-audit\n');
    writeFileSync(join(dir, 'input.yaml'), 'release: 2026.11.3\n');
  });
  afterAll(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    api.seen.length = 0;
    api.authorizations.length = 0;
    api.headers.length = 0;
    api.routes = {};
  });

  it('validate sends the file as it is with the actor token, prints the report, and exits 0 when accepted and ready', async () => {
    api.json('POST', `${DOOR}/packages/validate`, 200, report());

    const answer = await sut(['ade', 'validate', join(dir, 'pkg.dsse.json')]);

    expect(answer).toEqual({ code: ExitCode.ok, stdout: `${validationLines(report()).join('\n')}\n`, stderr: '' });
    expect(api.seen).toEqual([expect.objectContaining({ method: 'POST', url: `${DOOR}/packages/validate`, body: document })]);
    expect(api.headers[0]!['content-type']).toBe('application/json');
    expect(api.authorizations).toEqual([`Bearer ${TOKEN}`]);
  });

  it('validate exits 4 for a refused signer and 5 for a package accepted but not ready, still printing the report (as JSON with --json)', async () => {
    const refused = report({ signatures: [{ keyId: KEY, trusted: false, acknowledged: false }], accepted: false, refusal: { code: 'publisher_untrusted', detail: `${KEY} is not a trusted publisher` } });
    api.json('POST', `${DOOR}/packages/validate`, 200, refused);
    const first = await sut(['--json', 'ade', 'validate', join(dir, 'pkg.dsse.json')]);
    const missing = report({ preflight: { ready: false, missing: [{ kind: 'credential', name: 'slack_release_channel', reason: 'not set in this workspace' }] } });
    api.json('POST', `${DOOR}/packages/validate`, 200, missing);
    const second = await sut(['ade', 'validate', join(dir, 'pkg.dsse.json')]);

    expect(first.code).toBe(AdeExitCode.refused);
    expect(JSON.parse(first.stdout)).toEqual(refused);
    expect(first.stderr).toBe('error: this workspace does not accept the package (publisher_untrusted)\n');
    expect(second.code).toBe(AdeExitCode.notReady);
    expect(second.stdout).toContain('preflight: not ready, missing:\n  credential slack_release_channel: not set in this workspace\n');
    expect(second.stderr).toBe('error: the package is accepted, but 1 requirement is missing here\n');
  });

  it('validate reports a malformed package by its code and the paths the server names, and exits 1', async () => {
    api.json('POST', `${DOOR}/packages/validate`, 400, {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'the payload is not the canonical form of the package',
      code: 'package_not_canonical',
      requestId: 'req_1',
      errors: [{ path: 'payload', message: 'not RFC 8785 bytes' }],
    });

    const answer = await sut(['ade', 'validate', join(dir, 'pkg.dsse.json')]);

    expect(answer).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: package_not_canonical: the payload is not the canonical form of the package\n  payload: not RFC 8785 bytes\n' });
  });

  it('refuses to call the door without an actor token, or with an API key in its place, before sending anything', async () => {
    const none = await sut(['ade', 'validate', join(dir, 'pkg.dsse.json')], {});
    const apiKey = await sut(['ade', 'deploy', join(dir, 'pkg.dsse.json'), '--token', 'pa_key1_secret'], {});

    expect(none).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: no PacketADE actor token: set PACKETAGENT_ADE_TOKEN (or pass --token); `packetagent ade actor issue` makes one\n' });
    expect(apiKey.code).toBe(ExitCode.failure);
    expect(apiKey.stderr).toMatch(/takes an actor token .* not an API key/);
    expect(api.seen).toEqual([]);
  });

  it('deploy embeds the file verbatim with the idempotency key, and prints the receipt with the webhook secret shown once', async () => {
    api.json('POST', `${DOOR}/deployments`, 201, receipt());

    const answer = await sut(['ade', 'deploy', join(dir, 'pkg.dsse.json'), '--idempotency-key', 'release "2026.11"']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen[0]!.body).toBe(`{"package":${document},"idempotencyKey":"release \\"2026.11\\""}`);
    expect(answer.stdout.split('\n')).toEqual([
      'deployment dep_1 created',
      'worker release-audit (wk_1) version 1',
      `version digest ${'v'.repeat(64)}`,
      `package digest ${DIGEST}`,
      `signed by ${KEY}`,
      expect.stringMatching(/^webhook trg_1: http:\/\/127\.0\.0\.1:\d+\/hooks\/trg_1$/),
      '  secret: whsec_once  (shown once: store it now)',
      '',
    ]);
  });

  it('deploy says a repeat is unchanged, drops a byte order mark before embedding, and refuses a file that is not JSON without sending it', async () => {
    api.json('POST', `${DOOR}/deployments`, 200, receipt({ created: false, webhooks: [] }));

    const repeat = await sut(['ade', 'deploy', join(dir, 'bom.json')]);
    const yaml = await sut(['ade', 'deploy', join(dir, 'worker.yaml')]);

    expect(repeat.code).toBe(ExitCode.ok);
    expect(repeat.stdout).toMatch(/^deployment dep_1 unchanged: deployed before with this package or idempotency key\n/);
    expect(repeat.stdout).not.toContain('secret');
    expect(api.seen.map((request) => request.body)).toEqual([`{"package":${document}}`]);
    expect(yaml.code).toBe(ExitCode.failure);
    expect(yaml.stderr).toMatch(/worker\.yaml: not JSON/);
  });

  it('deploy exits 4 as validate does when the workspace refuses the publisher, naming the code, and 3 when the token may not deploy', async () => {
    api.json('POST', `${DOOR}/deployments`, 403, { title: 'Forbidden', status: 403, code: 'publisher_untrusted', detail: `${KEY} is not a trusted publisher of this workspace` });
    const untrusted = await sut(['ade', 'deploy', join(dir, 'pkg.dsse.json')]);
    api.json('PUT', `${DOOR}/deployments/dep_1`, 403, { title: 'Forbidden', status: 403, code: 'permission_denied', detail: 'this actor token does not allow "update"' });
    const denied = await sut(['ade', 'update', 'dep_1', join(dir, 'pkg.dsse.json')]);

    expect(untrusted).toEqual({ code: AdeExitCode.refused, stdout: '', stderr: `error: publisher_untrusted: ${KEY} is not a trusted publisher of this workspace\n` });
    expect(denied).toEqual({ code: ExitCode.auth, stdout: '', stderr: 'error: permission_denied: this actor token does not allow "update"\n' });
  });

  it('update puts the package to the deployment and says whether it moved', async () => {
    api.json('PUT', `${DOOR}/deployments/dep_1`, 200, receipt({ version: 2, webhooks: [] }));

    const answer = await sut(['ade', 'update', 'dep_1', join(dir, 'pkg.dsse.json')]);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen[0]!.body).toBe(`{"package":${document}}`);
    expect(answer.stdout).toMatch(/^deployment dep_1 moved to version 2\n/);
  });

  it('run posts the input from a file and the idempotency key, and says when the key answered an earlier run', async () => {
    api.json('POST', `${DOOR}/deployments/dep_1/runs`, 200, { runId: 'run_1', activationId: 'act_1', deploymentId: 'dep_1', state: 'queued', hold: 'deployment_paused', duplicate: true });

    const answer = await sut(['ade', 'run', 'dep_1', '--input', `@${join(dir, 'input.yaml')}`, '--idempotency-key', 'rel-1']);

    expect(answer).toEqual({ code: ExitCode.ok, stdout: 'run run_1  queued (held: deployment_paused)  (started before with this idempotency key)\n', stderr: '' });
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ input: { release: '2026.11.3' }, idempotencyKey: 'rel-1' });
  });
});

describe(validationLines.name, () => {
  it('names each signature with its trust, an unsigned package as such, and the refusal with its code', () => {
    const lines = validationLines(
      report({
        signatures: [
          { keyId: KEY, trusted: false, acknowledged: true },
          { keyId: 'SHA256:other', trusted: false, acknowledged: false },
        ],
      }),
    );
    expect(lines.slice(2, 5)).toEqual([`signed by ${KEY} (not trusted, acknowledged for this package)`, 'signed by SHA256:other (not trusted)', 'accepted']);
    expect(validationLines(report({ signed: false, signatures: [], accepted: false, refusal: { code: 'package_unsigned', detail: 'sign it' } })).slice(2, 4)).toEqual(['unsigned', 'refused: package_unsigned: sign it']);
    expect(validationLines(report({ requires: { providers: [], tools: [], credentials: [] } }))).toContain('requires providers: none; tools: none; credentials: none');
  });
});

describe(validationOutcome.name, () => {
  it('is null only when accepted and ready; a refusal outranks what is missing', () => {
    const missing = { ready: false, missing: [{ kind: 'tool', name: 'slack_post', reason: 'unknown' }, { kind: 'provider', name: 'anthropic', reason: 'no key' }] };
    expect(validationOutcome(report())).toBeNull();
    expect(validationOutcome(report({ accepted: false, refusal: { code: 'publisher_untrusted', detail: '' }, preflight: missing }))?.exitCode).toBe(AdeExitCode.refused);
    expect(validationOutcome(report({ preflight: missing }))?.message).toBe('the package is accepted, but 2 requirements are missing here');
  });
});

describe(receiptLines.name, () => {
  it('says an update that changed nothing is unchanged, and an unsigned receipt as such', () => {
    expect(receiptLines(receipt({ created: false, signedBy: [], webhooks: [] }), 'update', (path) => `https://pa.example.com/${path}`)).toEqual([
      'deployment dep_1 unchanged: it already runs this package',
      'worker release-audit (wk_1) version 1',
      `version digest ${'v'.repeat(64)}`,
      `package digest ${DIGEST}`,
      'unsigned',
    ]);
  });
});
