import { jetstream } from '@nats-io/jetstream';
import { IntakeCommands, runStreamId, type DeploymentView } from '@packetagent/contracts';
import { topology } from '@packetagent/bus';
import { eventually } from '@packetagent/testing';
import { alertmanagerSample } from '../alerts/alertmanager-sample.testkit';
import { definition, startIntake, type IntakeHarness } from '../testing/intake.testkit';
import { webhookSignature } from '../webhooks/webhook-signature';

describe('trigger activations', () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await startIntake();
  });
  afterAll(() => h.close());

  async function deploy(triggers: unknown[], name = `w-${Math.random().toString(36).slice(2, 8)}`) {
    const { id: workerId } = await h.bus.request(IntakeCommands.createWorker, { workspaceId: h.workspaceId, actor: h.actor, name });
    await h.bus.request(IntakeCommands.createVersion, {
      workspaceId: h.workspaceId,
      actor: h.actor,
      workerId,
      source: definition({ name, triggers }),
      format: 'json',
    });
    return h.bus.request(IntakeCommands.createDeployment, { workspaceId: h.workspaceId, actor: h.actor, workerId });
  }

  const runsOf = async (deployment: Pick<DeploymentView, 'id'>) =>
    (await h.bus.request(IntakeCommands.listRuns, { workspaceId: h.workspaceId, deploymentId: deployment.id })).items;

  describe('webhooks', () => {
    let deployment: Awaited<ReturnType<typeof deploy>>;
    let secret: string;
    let triggerId: string;
    const body = Buffer.from(JSON.stringify({ release: '2026.11.3' }));

    beforeAll(async () => {
      deployment = await deploy([{ webhook: {}, name: 'ci' }]);
      [{ triggerId, secret }] = deployment.webhooks as [{ triggerId: string; secret: string }];
    });

    const deliver = (overrides: Partial<{ timestamp: string; signature: string; body: Buffer; receivedAt: string }> = {}) => {
      const timestamp = overrides.timestamp ?? String(Math.floor(Date.now() / 1000));
      const payload = overrides.body ?? body;
      return h.bus.request(IntakeCommands.deliverWebhook, {
        triggerId,
        timestamp,
        signature: overrides.signature ?? webhookSignature(secret, timestamp, payload),
        bodyBase64: payload.toString('base64'),
        contentType: 'application/json',
        receivedAt: overrides.receivedAt ?? new Date().toISOString(),
      });
    };

    it('returns the secret once, at creation, and never in the deployment afterwards or in events', async () => {
      expect(secret).toMatch(/^whsec_/);
      const read = await h.bus.request(IntakeCommands.getDeployment, { workspaceId: h.workspaceId, deploymentId: deployment.id });
      expect(JSON.stringify(read)).not.toContain(secret);
      const events = await h.store.readStream(`deployment-${deployment.id}`);
      expect(JSON.stringify(events)).not.toContain(secret);
    });

    it('refuses a forged signature, a stale timestamp and a tampered body, admitting nothing', async () => {
      const stale = String(Math.floor(Date.now() / 1000) - 301);
      await expect(deliver({ signature: 'f'.repeat(64) })).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
      await expect(deliver({ signature: webhookSignature('whsec_wrong', stale, body) })).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
      await expect(deliver({ timestamp: stale, signature: webhookSignature(secret, stale, body) })).rejects.toMatchObject({ code: 'webhook_timestamp_stale' });
      const timestamp = String(Math.floor(Date.now() / 1000));
      await expect(
        deliver({ timestamp, signature: webhookSignature(secret, timestamp, body), body: Buffer.from('{"release":"evil"}') }),
      ).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
      expect(await runsOf(deployment)).toEqual([]);
    });

    it('admits a valid delivery exactly once and refuses its replay', async () => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = webhookSignature(secret, timestamp, body);

      const sut = await deliver({ timestamp, signature });

      expect(sut).toMatchObject({ deploymentId: deployment.id, duplicate: false });
      await expect(deliver({ timestamp, signature })).rejects.toMatchObject({ code: 'webhook_replayed' });
      const runs = await runsOf(deployment);
      expect(runs.map((r) => [r.id, r.source, r.triggerId])).toEqual([[sut.runId, 'webhook', triggerId]]);
      const [admitted] = await h.store.readStream(runStreamId(sut.runId));
      expect((admitted!.data as { activation: { input: unknown } }).activation.input).toEqual({ release: '2026.11.3' });
    });

    it('keeps the webhook id and secret across a rollback that keeps the trigger', async () => {
      await h.bus.request(IntakeCommands.createVersion, {
        workspaceId: h.workspaceId,
        actor: h.actor,
        workerId: deployment.workerId,
        source: definition({ name: deployment.workerName, triggers: [{ webhook: {}, name: 'ci' }], description: 'v2' }),
        format: 'json',
      });
      const control = (action: 'rollback', version: number) =>
        h.bus.request(IntakeCommands.controlDeployment, { workspaceId: h.workspaceId, actor: h.actor, deploymentId: deployment.id, action, version });
      await expect(control('rollback', 1)).rejects.toMatchObject({ code: 'invalid_transition' });

      const rolled = await control('rollback', 2);

      expect(rolled.version).toBe(2);
      expect(rolled.webhooks).toEqual([]);
      expect(rolled.triggers.map((t) => t.triggerId)).toEqual([triggerId]);
      const result = await deliver({ body: Buffer.from(JSON.stringify({ release: '2026.11.4' })) });
      const [admitted] = await h.store.readStream(runStreamId(result.runId));
      expect((admitted!.data as { version: number }).version).toBe(2);
    });
  });

  describe('alerts', () => {
    it('wakes only the deployments subscribed to an alert, once per occurrence, for the statuses they want', async () => {
      const byName = await deploy([{ alert: { names: ['HighErrorRate'] } }]);
      const byLabel = await deploy([{ alert: { labels: { service: 'db' }, on: ['firing', 'resolved'] } }]);
      const unrelated = await deploy([{ alert: { names: ['SomethingElse'] } }]);
      const ingest = (payload: unknown) => h.bus.request(IntakeCommands.ingestAlerts, { workspaceId: h.workspaceId, actor: h.actor, payload: payload as never });

      const firing = await ingest(alertmanagerSample);

      expect(firing.received).toBe(2);
      expect(firing.activations.map((a) => [a.deploymentId, a.fingerprint, a.status]).sort()).toEqual(
        [
          [byName.id, 'c3f1a1b2d4e5f601', 'firing'],
          [byLabel.id, 'aa00bb11cc22dd33', 'firing'],
        ].sort(),
      );
      // Alertmanager repeats a notification: nothing new.
      const repeated = await ingest(alertmanagerSample);
      expect(repeated.activations.every((a) => a.duplicate)).toBe(true);
      const resolved = await ingest({
        ...alertmanagerSample,
        status: 'resolved',
        alerts: alertmanagerSample.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: '2026-11-30T09:00:00.000Z' })),
      });
      expect(resolved.activations.map((a) => [a.deploymentId, a.status])).toEqual([[byLabel.id, 'resolved']]);
      expect(await runsOf(byName)).toHaveLength(1);
      expect(await runsOf(byLabel)).toHaveLength(2);
      expect(await runsOf(unrelated)).toHaveLength(0);
    });

    it('refuses a payload that is not Alertmanager version 4, naming the field', async () => {
      await expect(
        h.bus.request(IntakeCommands.ingestAlerts, { workspaceId: h.workspaceId, actor: h.actor, payload: { ...alertmanagerSample, version: '3' } as never }),
      ).rejects.toMatchObject({ code: 'validation_failed', issues: [{ path: 'version', message: 'only Alertmanager webhook payload version "4" is supported' }] });
    });
  });

  describe('queue messages', () => {
    it('turns each message on the workspace subject into one activation, deduplicated by message id', async () => {
      const deployment = await deploy([{ queue: { subject: 'orders.created' } }]);
      const other = await deploy([{ queue: { subject: 'orders.cancelled' } }]);
      const js = jetstream(h.testBus.nc);
      const subject = `${topology(h.testBus.prefix).queueSubjectRoot}.${h.workspaceId}.orders.created`;

      await js.publish(subject, JSON.stringify({ order: 1 }), { msgID: 'order-1' });
      await js.publish(subject, JSON.stringify({ order: 1 }), { msgID: 'order-1' });
      await js.publish(subject, JSON.stringify({ order: 2 }));
      await js.publish(`${topology(h.testBus.prefix).queueSubjectRoot}.ws_elsewhere.orders.created`, '{}');

      const runs = await eventually(async () => {
        const items = await runsOf(deployment);
        return items.length === 2 && items;
      }, { what: 'two queue activations' });
      expect(runs.every((r) => r.source === 'queue')).toBe(true);
      const inputs = await Promise.all(runs.map(async (r) => ((await h.store.readStream(runStreamId(r.id)))[0]!.data as { activation: { input: unknown } }).activation.input));
      expect(inputs.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ order: 1 }, { order: 2 }]);
      expect(await runsOf(other)).toEqual([]);
    });
  });
});
