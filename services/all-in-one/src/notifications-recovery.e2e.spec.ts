import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { sharedInfrastructure, startAppProcess, type AppProcess, type SharedInfrastructure } from './testing/app-process.testkit';
import { RecordingServer } from './testing/execution.testkit';

/**
 * The notifications outbox across processes: the app sending a webhook is SIGKILLed while the
 * receiver holds the request; another process sends it again once the lease lapses, under the
 * same webhook-id, and the delivery is recorded once.
 */
describe('notification delivery across a crash', () => {
  let infra: SharedInfrastructure;
  let receiver: RecordingServer;
  let scriptsDir: string;
  let ws: string;
  let owner: string;
  const processes: AppProcess[] = [];

  const start = async (name: string) => {
    const app = await startAppProcess(infra, name, {
      PACKETAGENT_SCRIPTS_DIR: scriptsDir,
      PACKETAGENT_HTTP_ALLOW_PRIVATE: `127.0.0.1:${receiver.port}`,
      PACKETAGENT_NOTIFY_LEASE_MS: '1500',
      PACKETAGENT_NOTIFY_ATTEMPT_TIMEOUT_MS: '1000',
      PACKETAGENT_NOTIFY_RETRY_BASE_MS: '50',
    });
    processes.push(app);
    return app;
  };

  beforeAll(async () => {
    infra = await sharedInfrastructure();
    receiver = await new RecordingServer().start();
    scriptsDir = mkdtempSync(join(tmpdir(), 'pa-scripts-'));
    const first = await start('setup');
    const setup = await first.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: infra.setupToken, email: 'operator@example.com', password: 'correct horse battery staple', workspace: 'Notify' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const stored = await first.request('PUT', `/api/v1/workspaces/${ws}/credentials/ops_hook`, {
      body: { value: JSON.stringify({ url: `${receiver.origin}/hook`, secret }) },
      headers: bearer(owner),
    });
    expect(stored.status).toBe(200);
    await first.stop();
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((app) => app.kill()));
    await receiver?.close();
    await infra?.cleanup();
    rmSync(scriptsDir, { recursive: true, force: true });
  });

  it('loses nothing when the sender is SIGKILLed mid-delivery, and the repeat carries the same webhook-id', async () => {
    const a = await start('a');
    writeFileSync(join(scriptsDir, 'notify.yaml'), `turns:\n  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]\n`);
    const yaml = `apiVersion: packetagent/v1
kind: Worker
name: notify
model: { provider: scripted, model: notify }
instructions: Do the task.
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
notifications:
  - { on: [any_terminal], channel: webhook, credential: ops_hook }
`;
    const worker = await a.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name: 'notify' }, headers: bearer(owner) });
    await a.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, { raw: yaml, headers: { ...bearer(owner), 'content-type': 'application/yaml' } });
    const deployment = await a.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: bearer(owner) });

    // The first request is held open, as a slow receiver would; the sender dies while waiting.
    let held = 0;
    receiver.hold = () => ++held === 1;
    const run = await a.request<{ runId: string }>('POST', `/api/v1/workspaces/${ws}/deployments/${deployment.body.id}/runs`, { body: { input: {} }, headers: bearer(owner) });
    expect(run.status).toBe(201);
    await eventually(() => receiver.requests.length === 1, { what: 'the webhook to reach the receiver', timeoutMs: 30_000 });
    await a.kill();

    const b = await start('b');
    const delivered = await eventually(
      async () => {
        const list = await b.request<{ items: Array<{ deliveryId: string; state: string; attempts: number }> }>('GET', `/api/v1/workspaces/${ws}/notifications/deliveries?runId=${run.body.runId}`, {
          headers: bearer(owner),
        });
        return list.body.items.find((item) => item.state === 'delivered');
      },
      { what: 'the delivery after the crash', timeoutMs: 30_000 },
    );
    const ids = receiver.requests.map((request) => request.headers['webhook-id']);
    expect(ids).toHaveLength(2);
    expect(new Set(ids)).toEqual(new Set([delivered.deliveryId]));
    // The attempt the dead process made was never recorded; the one that succeeded was, once.
    expect(delivered.attempts).toBe(1);
    const { rows } = await infra.db.pool.query<{ type: string }>('SELECT type FROM events WHERE stream_id = $1 ORDER BY stream_version', [`delivery-${delivered.deliveryId}`]);
    expect(rows.map((row) => row.type)).toEqual(['notification.queued', 'notification.delivered']);
  }, 120_000);
});
